package rehearsal_test

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// started is one API server from $UPGRADESCOPE_KUBE_BINARIES shared by the tests of this
// package: starting one takes seconds.
var started struct {
	once sync.Once
	srv  *rehearsal.Server
	err  error
}

func binariesServer(t *testing.T) *rehearsal.Server {
	t.Helper()
	dir := kubetest.Binaries(t)
	started.once.Do(func() {
		started.srv, started.err = rehearsal.Start(context.Background(), dir)
	})
	if started.err != nil {
		t.Fatal(started.err)
	}
	return started.srv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if started.srv != nil {
		_ = started.srv.Close()
	}
	os.Exit(code)
}

// obj reads one YAML object, its source the line given.
func obj(t testing.TB, file string, line int, y string) rehearsal.Object {
	t.Helper()
	u := &unstructured.Unstructured{}
	data, err := sigsyaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return rehearsal.Object{Obj: u, Source: inventory.RehearsalSource{File: file, Line: line}}
}

const mismatchedSelector = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: rehearse-shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`

const badServiceName = `
apiVersion: v1
kind: Service
metadata: {name: Shop_1, namespace: rehearse-shop}
spec: {ports: [{port: 80}]}
`

const goodConfigMap = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: rehearse-shop}
data: {a: b}
`

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.rehearse.example.com}
spec:
  group: rehearse.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`

const widget = `
apiVersion: rehearse.example.com/v1
kind: Widget
metadata: {name: w, namespace: rehearse-widgets}
spec: {size: 3}
`

const badWidget = `
apiVersion: rehearse.example.com/v1
kind: Widget
metadata: {name: w2, namespace: rehearse-widgets}
spec: {size: "three"}
`

const gadget = `
apiVersion: gadgets.example.com/v1
kind: Gadget
metadata: {name: g, namespace: rehearse-widgets}
`

func TestTheServerRejectsWhatASchemaCheckPasses(t *testing.T) {
	srv := binariesServer(t)
	objs := []rehearsal.Object{
		obj(t, "shop.yaml", 1, mismatchedSelector),
		obj(t, "shop.yaml", 12, badServiceName),
		obj(t, "shop.yaml", 18, goodConfigMap),
		obj(t, "widgets.yaml", 1, widgetCRD),
		obj(t, "widgets.yaml", 15, widget),
		obj(t, "widgets.yaml", 21, badWidget),
		obj(t, "widgets.yaml", 27, gadget),
	}
	skipped := []rehearsal.Skipped{{APIVersion: "policy/v1beta1", Kind: "PodDisruptionBudget", Name: "pdb",
		Source: inventory.RehearsalSource{File: "pdb.yaml", Line: 1}, Reason: "no conversion", Message: "/spec/selector: an empty selector selects every pod in policy/v1"}}
	sec, err := rehearsal.Replay(context.Background(), srv, objs, skipped, rehearsal.Options{Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Objects != 8 || sec.Accepted != 3 || sec.Server != rehearsal.ServerBinaries || !strings.HasPrefix(sec.ServerVersion, "v1.35.") {
		t.Errorf("objects %d accepted %d server %s %s, want 8, 3 (configmap, CRD, widget), kube-binaries v1.35", sec.Objects, sec.Accepted, sec.Server, sec.ServerVersion)
	}
	want := []struct{ file, kind, name, reason, message string }{
		{"shop.yaml", "Deployment", "web", "Invalid", "`selector` does not match template `labels`"},
		{"shop.yaml", "Service", "Shop_1", "Invalid", "a DNS-1035 label must consist of lower case"},
		// server-side apply's typed patch refuses a field of the wrong type with a 500
		{"widgets.yaml", "Widget", "w2", "InternalError", ".spec.size: expected numeric (int or float), got string"},
	}
	if len(sec.Rejections) != len(want) {
		t.Fatalf("rejections %+v, want %d; not replayed %+v", sec.Rejections, len(want), sec.NotReplayed)
	}
	for i, w := range want {
		got := sec.Rejections[i]
		if got.Source.File != w.file || got.Kind != w.kind || got.Name != w.name || got.Reason != w.reason || !strings.Contains(got.Message, w.message) {
			t.Errorf("rejection %d = %+v, want %+v", i, got, w)
		}
	}
	if len(sec.NotReplayed) != 2 || sec.NotReplayed[0].Reason != "no conversion" || sec.NotReplayed[1].Kind != "Gadget" || sec.NotReplayed[1].Reason != rehearsal.ReasonCRDMissing {
		t.Errorf("not replayed %+v, want the skipped PDB and the Gadget without a CRD", sec.NotReplayed)
	}
	if c := rehearsal.Capability(sec); !c.Available || !c.Partial || !strings.Contains(c.Reason, "2 of 8 objects not replayed") {
		t.Errorf("capability %+v, want partial naming 2 of 8", c)
	}
}

func TestWhatTheTimeDoesNotAllowIsNotReplayed(t *testing.T) {
	srv := binariesServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sec, err := rehearsal.Replay(ctx, srv, []rehearsal.Object{obj(t, "a.yaml", 1, goodConfigMap)}, nil, rehearsal.Options{Target: "1.35", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Accepted != 0 || len(sec.NotReplayed) != 1 || sec.NotReplayed[0].Reason != rehearsal.ReasonTimeout {
		t.Errorf("section %+v, want the ConfigMap not replayed for the timeout", sec)
	}
}

// A ValidatingAdmissionPolicy refuses as a webhook would, with no webhook server to run: it
// is created for real first, and the replayed ConfigMap it matches is refused.
func TestAnAdmissionPolicyOfTheServerRefusesAnObject(t *testing.T) {
	srv := binariesServer(t)
	dyn, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	policy := obj(t, "", 0, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-forbidden-tier}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  validations:
  - expression: "!has(object.metadata.labels) || !('tier' in object.metadata.labels) || object.metadata.labels['tier'] != 'forbidden'"
    message: the tier label must not be forbidden
`).Obj
	binding := obj(t, "", 0, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-forbidden-tier}
spec: {policyName: no-forbidden-tier, validationActions: [Deny]}
`).Obj
	for gvr, o := range map[schema.GroupVersionResource]*unstructured.Unstructured{
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}:       policy,
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}: binding,
	} {
		if _, err := dyn.Resource(gvr).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labelled := obj(t, "policy.yaml", 3, `
apiVersion: v1
kind: ConfigMap
metadata: {name: tiered, namespace: rehearse-policy, labels: {tier: forbidden}}
`)
	// The API server compiles a new policy in the background: the first replays may pass.
	var sec *inventory.Rehearsal
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if sec, err = rehearsal.Replay(ctx, srv, []rehearsal.Object{labelled}, nil, rehearsal.Options{Target: "1.35"}); err != nil {
			t.Fatal(err)
		}
		if len(sec.Rejections) > 0 {
			break
		}
	}
	if len(sec.Rejections) != 1 || sec.Rejections[0].Reason != "Invalid" || !strings.Contains(sec.Rejections[0].Message, "the tier label must not be forbidden") ||
		sec.Rejections[0].Source.Line != 3 {
		t.Errorf("section %+v, want the ConfigMap refused by the policy", sec)
	}
}

// The report prints the server's message, and server-side apply's typed patch quotes a value
// of the wrong type: a refused Secret's message must not carry its data.
func TestARefusedSecretsMessageDoesNotCarryItsData(t *testing.T) {
	srv := binariesServer(t)
	objs := []rehearsal.Object{
		obj(t, "secrets.yaml", 1, `
apiVersion: v1
kind: Secret
metadata: {name: pin, namespace: rehearse-secrets}
stringData: {pin: 987654321}
`),
		obj(t, "secrets.yaml", 6, `
apiVersion: v1
kind: Secret
metadata: {name: nested, namespace: rehearse-secrets}
stringData: {flag: true, nested: {a: topsecretvalue}}
`),
		obj(t, "secrets.yaml", 11, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: rehearse-secrets}
data: {port: 8080}
`),
	}
	sec, err := rehearsal.Replay(context.Background(), srv, objs, nil, rehearsal.Options{Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sec.Rejections) != 3 {
		t.Fatalf("rejections %+v, want the two Secrets and the ConfigMap; not replayed %+v", sec.Rejections, sec.NotReplayed)
	}
	tests := []struct {
		name, field, leaked string
	}{
		{"pin", ".stringData.pin: expected string, got <redacted>", "987654321"},
		{"nested", ".stringData.nested: expected string, got <redacted>", "topsecretvalue"},
		// a ConfigMap's data is no secret: its message keeps the value, which says what is wrong
		{"settings", "Value:8080", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range sec.Rejections {
				if r.Name != tt.name {
					continue
				}
				if !strings.Contains(r.Message, tt.field) || tt.leaked != "" && strings.Contains(r.Message, tt.leaked) {
					t.Errorf("message %q, want it to contain %q and not %q", r.Message, tt.field, tt.leaked)
				}
				return
			}
			t.Errorf("no rejection of %s in %+v", tt.name, sec.Rejections)
		})
	}
}

// On a test cluster whose kubeconfig lacks the rights, the authorizer answers 403 before
// admission sees the object: not judged, so not replayed (the verdict unknown), never a
// blocker. A 403 of admission (PodSecurity) is the server refusing the object.
func TestAnIdentityWithoutTheRightsLeavesObjectsNotReplayedNotRefused(t *testing.T) {
	srv := binariesServer(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	rbac := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
	}
	for gvr, y := range map[schema.GroupVersionResource]string{
		rbac("clusterroles"): `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rehearse-namespace-reader}
rules: [{apiGroups: [""], resources: [namespaces], verbs: [get]}]
`,
		rbac("clusterrolebindings"): `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rehearse-namespace-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rehearse-namespace-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: rehearse-reader}]
`,
		namespacesGVR: `
apiVersion: v1
kind: Namespace
metadata: {name: rehearse-restricted, labels: {pod-security.kubernetes.io/enforce: restricted}}
`,
	} {
		if _, err := dyn.Resource(gvr).Create(ctx, obj(t, "", 0, y).Obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	reader := *srv
	reader.Config = rest.CopyConfig(srv.Config)
	reader.Config.Impersonate = rest.ImpersonationConfig{UserName: "rehearse-reader"}
	privileged := obj(t, "pod.yaml", 1, `
apiVersion: v1
kind: Pod
metadata: {name: root, namespace: rehearse-restricted}
spec: {containers: [{name: c, image: nginx:1.27, securityContext: {privileged: true}}]}
`)
	tests := []struct {
		name        string
		server      *rehearsal.Server
		rejected    string
		notReplayed string
	}{
		{"an identity that may only read namespaces", &reader, "", rehearsal.ReasonForbidden},
		{"an admin, refused by PodSecurity", srv, "Forbidden", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec, err := rehearsal.Replay(ctx, tt.server, []rehearsal.Object{privileged}, nil, rehearsal.Options{Target: "1.35"})
			if err != nil {
				t.Fatal(err)
			}
			var rejected, notReplayed string
			if len(sec.Rejections) == 1 {
				rejected = sec.Rejections[0].Reason
			}
			if len(sec.NotReplayed) == 1 {
				notReplayed = sec.NotReplayed[0].Reason
			}
			if rejected != tt.rejected || notReplayed != tt.notReplayed || len(sec.Rejections)+len(sec.NotReplayed) != 1 {
				t.Errorf("rejections %+v, not replayed %+v; want rejected %q, not replayed %q", sec.Rejections, sec.NotReplayed, tt.rejected, tt.notReplayed)
			}
		})
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// A bare Pod naming a PriorityClass or RuntimeClass of the set: admission looks the class up,
// so the replay creates the classes for real first, as they exist on the cluster upgraded.
func TestABarePodNamingAClassOfTheSetIsAccepted(t *testing.T) {
	srv := binariesServer(t)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	objs := []rehearsal.Object{
		obj(t, "pod.yaml", 1, `apiVersion: v1
kind: Pod
metadata: {name: debug, namespace: rehearse-classes}
spec:
  priorityClassName: high-`+run+`
  runtimeClassName: gvisor-`+run+`
  nodeName: node-1
  containers: [{name: debug, image: registry.example.com/toolbox:1}]`),
		obj(t, "classes.yaml", 1, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-"+run+"}\nvalue: 1000"),
		obj(t, "classes.yaml", 5, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor-"+run+"}\nhandler: runsc"),
	}
	sec, err := rehearsal.Replay(context.Background(), srv, objs, nil, rehearsal.Options{Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Accepted != 3 || len(sec.Rejections)+len(sec.NotReplayed) != 0 {
		t.Errorf("accepted %d; refused %+v; not replayed %+v; want all 3 accepted", sec.Accepted, sec.Rejections, sec.NotReplayed)
	}
}

// A webhook the server cannot call answers 500: the rehearsal server's webhook is down, which
// says nothing of whether the target accepts the object, so it is not replayed (the verdict
// unknown), never refused. Server-side apply's typed-patch 500 stays a refusal
// (TestTheServerRejectsWhatASchemaCheckPasses).
func TestAWebhookTheServerCannotCallLeavesTheObjectNotReplayedNotRefused(t *testing.T) {
	srv := binariesServer(t)
	dyn, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	webhooks := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	// Nothing listens on port 1; only objects labelled polish-webhook=unreachable are sent to it.
	unreachable := obj(t, "", 0, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: polish-unreachable}
webhooks:
- name: unreachable.polish.example.com
  clientConfig: {url: "https://127.0.0.1:1/validate"}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  objectSelector: {matchLabels: {polish-webhook: unreachable}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 2
`).Obj
	if _, err := dyn.Resource(webhooks).Create(ctx, unreachable, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(webhooks).Delete(context.Background(), "polish-unreachable", metav1.DeleteOptions{})
	})
	labelled := obj(t, "hooked.yaml", 1, `
apiVersion: v1
kind: ConfigMap
metadata: {name: hooked, namespace: polish-webhook, labels: {polish-webhook: unreachable}}
`)
	// The server picks up a new webhook configuration in the background: the first replays may pass.
	var sec *inventory.Rehearsal
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if sec, err = rehearsal.Replay(ctx, srv, []rehearsal.Object{labelled}, nil, rehearsal.Options{Target: "1.35"}); err != nil {
			t.Fatal(err)
		}
		if sec.Accepted == 0 {
			break
		}
	}
	if len(sec.Rejections) != 0 || len(sec.NotReplayed) != 1 || sec.NotReplayed[0].Reason != rehearsal.ReasonServerError ||
		!strings.Contains(sec.NotReplayed[0].Message, `failed calling webhook "unreachable.polish.example.com"`) {
		t.Errorf("rejections %+v, not replayed %+v; want the ConfigMap not replayed for a server error naming the webhook", sec.Rejections, sec.NotReplayed)
	}
	if c := rehearsal.Capability(sec); !c.Partial || !strings.Contains(c.Reason, "1 server error") {
		t.Errorf("capability %+v, want partial for 1 server error", c)
	}
}

// Requests run concurrently and answer in any order: the section lists the refusals and what
// was not replayed in one order, whatever the order of the objects and of the answers.
func TestTheSectionIsTheSameWhateverTheOrderOfTheAnswers(t *testing.T) {
	srv := binariesServer(t)
	var objs []rehearsal.Object
	for i := range 20 {
		ns := "polish-order-" + strconv.Itoa(i%3)
		bad := strings.ReplaceAll(strings.ReplaceAll(badServiceName, "Shop_1", "Shop_"+strconv.Itoa(i)), "rehearse-shop", ns)
		live := obj(t, "", 0, strings.ReplaceAll(gadget, "name: g,", "name: g"+strconv.Itoa(i)+","))
		live.Source = inventory.RehearsalSource{Live: true}
		objs = append(objs, obj(t, "order.yaml", 1+i%4, bad), live, obj(t, "order.yaml", 100+i, strings.ReplaceAll(goodConfigMap, "rehearse-shop", ns)))
	}
	var sections []*inventory.Rehearsal
	for _, order := range [][]rehearsal.Object{objs, reversed(objs)} {
		sec, err := rehearsal.Replay(context.Background(), srv, order, nil, rehearsal.Options{Target: "1.35", Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		sections = append(sections, sec)
	}
	if sections[0].Accepted != 20 || len(sections[0].Rejections) != 20 || len(sections[0].NotReplayed) != 20 {
		t.Fatalf("accepted %d, refused %d, not replayed %d; want 20 of each", sections[0].Accepted, len(sections[0].Rejections), len(sections[0].NotReplayed))
	}
	if !reflect.DeepEqual(sections[0], sections[1]) || !reflect.DeepEqual(rehearsal.Capability(sections[0]), rehearsal.Capability(sections[1])) {
		t.Errorf("the section differs with the order of the objects:\n%+v\n%+v", sections[0], sections[1])
	}
}

// reversed is objs in reverse order, each a copy, since a replay strips and sets them.
func reversed(objs []rehearsal.Object) []rehearsal.Object {
	out := make([]rehearsal.Object, len(objs))
	for i, o := range objs {
		o.Obj = o.Obj.DeepCopy()
		out[len(objs)-1-i] = o
	}
	return out
}
