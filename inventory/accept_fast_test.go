package inventory

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkSlowPathAgreement fails when a fast path changes a verdict or a word: the fast
// acceptor accepts what jsonschema or prescan refuses, Validate or Parse words an error
// otherwise than the slow path, or json/v2 decodes an accepted document otherwise than
// encoding/json. It reports whether the fast acceptor accepted data.
func checkSlowPathAgreement(t testing.TB, data []byte) bool {
	t.Helper()
	fast := acceptFast(data)
	slowErr := validateSlow(data)
	if fast && slowErr != nil {
		t.Fatalf("the fast acceptor accepts what the schema refuses: %v", slowErr)
	}
	if err := prescan(data); fast && err != nil {
		t.Fatalf("the fast acceptor accepts what prescan refuses: %v", err)
	}
	if err := Validate(data); errText(err) != errText(slowErr) {
		t.Fatalf("Validate says %q, the slow path %q", errText(err), errText(slowErr))
	}
	// Parse as it was before the fast paths: jsonschema's verdict, then encoding/json.
	want, wantErr := (*Document)(nil), slowErr
	if slowErr == nil {
		want, wantErr = decodeV1(data)
	}
	got, err := Parse(data)
	if errText(err) != errText(wantErr) {
		t.Fatalf("Parse says %q, the slow path %q", errText(err), errText(wantErr))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse decodes otherwise than the slow path:\n got %+v\nwant %+v", got, want)
	}
	if wantErr == nil {
		// What Parse accepted, DecodeStored reads back as Parse decoded it.
		if stored, err := DecodeStored(data); err != nil || !reflect.DeepEqual(stored, want) {
			t.Fatalf("DecodeStored decodes an accepted document otherwise than Parse (%v):\n got %+v\nwant %+v", err, stored, want)
		}
	}
	if fast {
		checkV2DecodesAsV1(t, data)
	}
	return fast
}

// checkV2DecodesAsV1 fails when json/v2 decodes an accepted document into anything but
// what encoding/json gives. Parse falls back on a v2 error, so only a v2 success must agree.
func checkV2DecodesAsV1(t testing.TB, data []byte) {
	t.Helper()
	var v1, v2 Document
	errV1 := json.Unmarshal(data, &v1)
	if err := jsonv2.Unmarshal(data, &v2); err != nil {
		return
	}
	if errV1 != nil {
		t.Fatalf("json/v2 decodes what encoding/json refuses: %v", errV1)
	}
	if !reflect.DeepEqual(v1, v2) {
		t.Fatalf("json/v2 decodes otherwise than encoding/json:\n v2 %+v\n v1 %+v", v2, v1)
	}
}

// fullDocument sets every property the schema declares at least once
// (TestTheFullDocumentSetsEverySchemaProperty), so mutating each of its values in turn
// reaches every node of the schema.
func fullDocument() *Document {
	ref := ObjectRef{
		Kind: "Ingress", Namespace: "web", Name: "shop", File: "deploy/shop.yaml", Line: 3, RenderedFrom: "charts/shop",
		Ignore: &IgnoreAnnotation{Rules: "removed-api", Reason: "migrating — ticket 42"},
	}
	usage := APIUsage{
		Group: "extensions", Version: "v1beta1", Kind: "Ingress", Count: 7,
		Namespaces:        map[string]int{"web": 5, "shop": 2},
		NamespacesOmitted: 1, Objects: []ObjectRef{ref}, ObjectsOmitted: 6,
	}
	d := validDocument()
	d.ServerVersion, d.EmulatedVersion, d.Provider, d.FilesBase = "v1.33.2", "1.32", "eks", "/srv/manifests"
	d.FilesExcluded, d.FilesExcludedOmitted = []ExcludedPath{{Path: "samples/ratings_data.json", Pattern: "**/ratings_data.json", Origin: "--exclude"}}, 3
	d.Capabilities[CapHelm] = Capability{Available: false, Partial: true, Reason: "forbidden", Skipped: []string{"ns/a"}}
	d.APIUsage = []APIUsage{usage}
	d.APIAuthorshipUnknown = []APIUsage{usage}
	d.OrphanUsage = []APIUsage{usage}
	d.DeprecatedCalls = []DeprecatedCall{{Group: "batch", Version: "v1beta1", Resource: "cronjobs", Subresource: "status", RemovedRelease: "1.25"}}
	d.HelmReleases = []HelmRelease{{
		Name: "shop", Namespace: "web", Chart: "shop", ChartVersion: "1.2.3", AppVersion: "2.0",
		KubeVersion: ">=1.25", Status: "deployed", Revision: 4, ManifestAPIs: []APIUsage{usage},
	}}
	d.WorkloadImages = []WorkloadImage{{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{{
		Tag: "v1.9.0", Digest: "sha256:abc", Namespaces: []string{"ingress"}, NamespacesOmitted: 2,
		LabelSets: []map[string]string{{"app.kubernetes.io/name": "ingress-nginx"}}, LabelSetsOmitted: 1,
		Objects: []ObjectRef{ref}, ObjectsOmitted: 3,
	}}}}
	d.WorkloadImagesOmitted = 9
	d.IngressClasses = []IngressClass{{Name: "nginx", Controller: "k8s.io/ingress-nginx"}}
	d.Nodes = []NodeGroup{{KubeletVersion: "v1.33.2", ContainerRuntime: "containerd://1.7", Count: 2, Names: []string{"n1", "n2"}, NamesOmitted: 1}}
	d.ControlPlane = []ControlPlaneComponent{{Component: "etcd", Version: "3.5.9", Count: 3, KubeletVersion: "v1.33.2", Nodes: []string{"cp1"}, NodesOmitted: 2}}
	d.Namespaces = []Namespace{{Name: "web", Team: "storefront"}}
	d.CRDs = []CRD{{
		Group: "example.com", Kind: "Widget", Plural: "widgets",
		Versions:       []CRDVersion{{Name: "v1beta1", Served: true, Storage: true, Deprecated: true, DeprecationWarning: "use v1"}},
		StoredVersions: []string{"v1beta1"}, Usage: []APIUsage{usage},
	}}
	d.GitopsCharts = []GitopsChart{{
		Tool: ToolFlux, Namespace: "flux-system", Name: "shop", TargetNamespace: "web", Chart: "shop",
		RepoURL: "https://charts.example.com", SourceKind: "HelmRepository", Version: "1.2.3", VersionKind: VersionExact,
	}}
	d.ChartAdvice = []ChartAdvice{{
		Source: ChartSourceHelm, Namespace: "web", Name: "shop", Chart: "shop", Repository: "https://charts.example.com",
		Installed: "1.2.3", Read: true, Reason: "valuesFrom not read", Targets: []string{"1.36"},
		ValuesNotRead: []string{"valuesFrom"}, Stopped: "the installed chart version is not semver",
		Versions: []ChartVersionJudged{
			{Version: "1.2.3", AppVersion: "2.0", KubeVersion: "<1.36.0-0", APIs: []string{"apps/v1 Deployment"}, APIsOmitted: 1,
				Blocks: map[string][]string{"1.36": {"chart-incompat/helm-release/web/shop"}}},
			{Version: "1.3.0", Error: "render: template failed"},
		},
		VersionsOmitted: 2,
	}}
	d.ChartAdviceOmitted = 3
	d.Probes = []Probe{{
		ID: "kb/docker-socket",
		Probe: ProbeSpec{
			ID: "docker-socket", Kinds: []string{"core/Pod"}, PodTemplate: true,
			Path: "spec.volumes[*].hostPath.path", Match: "present", Values: true,
			Equals: []string{"/var/run/docker.sock"}, Prefixes: []string{"/run/"}, Unless: []string{"/x"},
			StrictInvalid: "ip",
		},
		Available: true, Reason: "partial", Examined: 12, Count: 2,
		Objects: []ProbeObject{{
			Group: "apps", Kind: "Deployment", Namespace: "ci", Name: "runner", File: "ci.yaml", Line: 4,
			RenderedFrom: "charts/ci", Values: []string{"/var/run/docker.sock"},
			Ignore: &IgnoreAnnotation{Rules: "removed-behaviour", Reason: "moving to kaniko"},
		}},
		ObjectsOmitted: 1, Values: []ProbeValue{{Value: "/var/run/docker.sock", Count: 2}}, ValuesOmitted: 1,
	}}
	d.Preflight = fullPreflight(ref)
	d.Rehearsal = fullRehearsal()
	d.AuditCalls = fullAuditCalls()
	return d
}

func fullRehearsal() *Rehearsal {
	o := RehearsalObject{
		APIVersion: "networking.k8s.io/v1", Kind: "Ingress", OriginalAPIVersion: "extensions/v1beta1",
		Namespace: "web", Name: "shop", Reason: "Invalid", Message: "spec.rules[0].http.paths[0].pathType: Required value",
		FieldManager: "upgradescope-rehearsal",
		Source:       RehearsalSource{File: "shop.yaml", Line: 3, HelmRelease: "web/shop", Application: "argocd/shop", Live: true},
	}
	return &Rehearsal{
		Target: "1.35", ServerVersion: "v1.35.4", Server: "kube-binaries", Objects: 9, Accepted: 7, Converted: 1,
		Rejections: []RehearsalObject{o}, RejectionsOmitted: 1, NotReplayed: []RehearsalObject{o}, NotReplayedOmitted: 1,
	}
}

func fullPreflight(ref ObjectRef) *Preflight {
	found, ready, failCgroupV1 := true, 0, false
	svc := &ServiceRef{Namespace: "web", Name: "hook", Port: 443, Found: &found, ReadyEndpoints: &ready}
	names := NameList{Count: 3, Names: []string{"n1"}, NamesOmitted: 2}
	pods := PodList{Count: 2, Objects: []ObjectRef{ref}, ObjectsOmitted: 1}
	return &Preflight{
		DisruptionBudgets: []DisruptionBudget{{
			Object: ref, APIVersion: "policy/v1", MinAvailable: "2", MaxUnavailable: "0", SelectorEmpty: true,
			UnhealthyPodEvictionPolicy: "AlwaysAllow",
			Status:                     &BudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2},
			Pods:                       []string{"shop-1"}, PodsOmitted: 1,
			Workloads: []WorkloadReplicas{{Object: ref, Replicas: 2, Autoscaled: true}}, WorkloadsOmitted: 1,
		}},
		DisruptionBudgetsOmitted: 1,
		Drain:                    &DrainPods{Examined: 9, Unreplicated: pods, LocalStorage: pods},
		Placements:               []Placement{{Object: ref, Replicas: 3, Rule: "anti-affinity"}},
		PlacementsOmitted:        1,
		Webhooks: []Webhook{{
			Configuration: ref, APIVersion: "admissionregistration.k8s.io/v1", Name: "hook.example.com",
			FailurePolicy: "Fail", RulesOmitted: 1, CoversKubeSystem: true, ObjectSelectorEmpty: true,
			Rules: []WebhookRule{{
				Operations: []string{"CREATE"}, APIGroups: []string{""}, APIVersions: []string{"v1"},
				Resources: []string{"pods"}, Scope: "*",
			}},
			Service: svc, TimeoutSeconds: 10,
		}},
		WebhooksOmitted: 1,
		APIServices: []APIService{{
			Object: ref, Group: "metrics.k8s.io", Version: "v1beta1", Service: svc,
			Available: "False", Reason: "MissingEndpoints", Message: "endpoints for service/metrics-server not found",
		}},
		APIServicesOmitted: 1,
		Conversions:        []Conversion{{CRD: ref, Group: "example.com", Kind: "Widget", Service: svc, URL: true}},
		ConversionsOmitted: 1,
		NodeState: &NodeState{
			Examined: 5, Schedulable: 3, NotReady: names, Cordoned: names,
			Pressure: []NodeCondition{{Condition: "DiskPressure", Nodes: names}},
			Systems: []NodeSystem{{
				OSImage: "Ubuntu 20.04.6 LTS", KernelVersion: "5.4.0-1", ContainerRuntime: "containerd://1.7.2",
				KubeletVersion: "v1.33.2", Nodes: names,
			}},
			SystemsOmitted: 1,
		},
		Components: []Component{{
			Component: "kubelet", Source: "kubelet-configz", Object: ref,
			FeatureGates: []FeatureGate{{Name: "InPlacePodVerticalScaling", Value: true, Line: 12}},
			Flags:        []Flag{{Name: "--proxy-mode", Value: "ipvs", Line: 13}},
			Omitted:      1, Nodes: []string{"n1"}, NodesOmitted: 1, ProxyMode: "ipvs", FailCgroupV1: &failCgroupV1,
		}},
		ComponentsOmitted: 1,
	}
}

// The acceptor implements only the keywords schema.json uses; a subschema with any other is
// unknown, and a value that reaches it is left to jsonschema, whatever jsonschema says.
func TestTheAcceptorLeavesWhatItDoesNotImplementToTheSlowPath(t *testing.T) {
	cases := []struct {
		name, schema, doc string
		want              bool
	}{
		{"a value under an unknown keyword", `{"properties": {"a": {"multipleOf": 2}}}`, `{"a": 4}`, false},
		{"an object that never reaches it", `{"properties": {"a": {"multipleOf": 2}}}`, `{"b": 3}`, true},
		{"an unknown keyword at the root", `{"type": "array", "prefixItems": [{"type": "string"}]}`, `[]`, false},
		{"$ref beside other keywords", `{"$ref": "#/$defs/x", "type": "object", "$defs": {"x": {}}}`, `{}`, false},
		{"$ref alone", `{"$ref": "#/$defs/x", "$defs": {"x": {"type": "object"}}}`, `{}`, true},
		{"a $ref that reaches only itself", `{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}`, `{"x": 1}`, false},
		{"a recursive $ref through a property", `{"$ref": "#/$defs/t", "$defs": {"t": {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}}, "additionalProperties": false}}}`, `{"c": {"c": {}}}`, true},
		{"a recursive $ref refusing deep down", `{"$ref": "#/$defs/t", "$defs": {"t": {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}}, "additionalProperties": false}}}`, `{"c": {"d": 1}}`, false},
		{"the tuple form of items", `{"items": [{"type": "string"}]}`, `["a"]`, false},
		{"another draft", `{"$schema": "http://json-schema.org/draft-07/schema#"}`, `{}`, false},
		{"the false schema", `{"properties": {"a": false}}`, `{"a": 1}`, false},
		{"an enum member written 1.0", `{"enum": [1.0]}`, `1`, false},
		{"an enum member written 1", `{"enum": [1]}`, `1`, true},
		{"a minimum of 0.5", `{"minimum": 0.5}`, `1`, false},
		{"a format jsonschema accepts", `{"format": "email"}`, `"a@example.com"`, true},
		{"a format jsonschema refuses", `{"format": "email"}`, `"not an address"`, false},
		{"a format on a number", `{"format": "email"}`, `1`, false},
		{"a date the pattern allows and date-time refuses", `{"format": "date-time"}`, `"2026-02-30T12:00:00Z"`, false},
		{"a required name not declared", `{"required": ["a"]}`, `{"a": 1}`, true},
		{"a missing required name not declared", `{"required": ["a"]}`, `{}`, false},
		{"property names matching their pattern", `{"propertyNames": {"pattern": "^[a-z]+$"}}`, `{"ab": 1}`, true},
		{"a property name off its pattern", `{"propertyNames": {"pattern": "^[a-z]+$"}}`, `{"A": 1}`, false},
		{"null in a null const", `{"const": null}`, `null`, true},
		{"a string where integer or null is wanted", `{"type": ["integer", "null"]}`, `"1"`, false},
		{"an integer where number is wanted", `{"type": "number", "minimum": 0}`, `3`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, err := compileAcceptor([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			got := acceptWith(root, []byte(c.doc))
			if got != c.want {
				t.Errorf("the acceptor says %v, want %v", got, c.want)
			}
			if slow := validateWith(t, c.schema, c.doc); got && slow != nil {
				t.Errorf("the acceptor accepts what jsonschema refuses: %v", slow)
			}
		})
	}
}

// validateWith is jsonschema's verdict on doc, compiled as schema.go compiles schema.json;
// a schema it cannot compile (the tuple form of items in 2020-12) refuses every document.
func validateWith(t *testing.T, schema, doc string) error {
	t.Helper()
	s, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("test.json", s); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("test.json")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

func fullAuditCalls() *AuditCalls {
	return &AuditCalls{
		Since: "2026-10-30T12:00:00Z", Events: 12, Requests: 6, DeprecatedRequests: 3, OwnReads: 1,
		Malformed: 1, MalformedAt: []string{"audit.log:7: not JSON"},
		Sources:        []AuditSource{{Path: "audit.log", Format: "event", Events: 12, Malformed: 1}},
		SourcesOmitted: 1,
		Callers: []AuditCaller{{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas", Subresource: "status",
			Verb: "list", User: "system:serviceaccount:ops:reporter", ServiceAccount: "ops/reporter",
			UserAgent: "reporter/1.0", SourceRanges: []string{"10.0.1.0/24"}, SourceRangesOmitted: 2,
			RemovedRelease: "1.32", Count: 3, FirstSeen: "2026-11-01T08:00:00Z", LastSeen: "2026-11-29T11:00:00Z",
		}},
		Omitted: []AuditOmitted{{
			Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas", Subresource: "status",
			Callers: 1, Calls: 4, RemovedRelease: "1.32", LastSeen: "2026-11-28T11:00:00Z",
		}},
		OmittedAPIs: 2,
		Kubectl: []KubectlClient{{
			Version: "v1.30.2", Count: 5, Users: []string{"alice"}, UsersOmitted: 1, LastSeen: "2026-11-29T11:30:00Z",
		}},
		KubectlOmitted: 1,
	}
}
