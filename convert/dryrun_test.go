package convert_test

import (
	"context"
	"encoding/json"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// fixtureNamespace is the namespace every namespaced fixture is written in.
const fixtureNamespace = "convert-fixtures"

// notServedByTheTestServer lists the fixtures whose converted version the 1.35 test server
// does not serve, with why; a listed fixture the server serves fails the test.
var notServedByTheTestServer = map[string]string{
	"admission.k8s.io_v1beta1_AdmissionReview":                            "AdmissionReview is a webhook's request body, no resource",
	"admissionregistration.k8s.io_v1beta1_MutatingAdmissionPolicy":        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy is served from 1.36",
	"admissionregistration.k8s.io_v1beta1_MutatingAdmissionPolicyBinding": "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding is served from 1.36",
	"certificates.k8s.io_v1beta1_ClusterTrustBundle":                      "certificates.k8s.io/v1 ClusterTrustBundle is served after 1.35",
	"storagemigration.k8s.io_v1beta1_StorageVersionMigration":             "storagemigration.k8s.io/v1 is served after 1.35",
	"extensions_v1beta1_PodSecurityPolicy":                                "policy/v1beta1 PodSecurityPolicy was removed in 1.25",
}

// TestTheAPIServerAcceptsEveryConversion sends every converted fixture to the real 1.35 API
// server as a server-side dry-run create: a conversion the server would reject is no
// conversion.
func TestTheAPIServerAcceptsEveryConversion(t *testing.T) {
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	// Deprecation warnings (kubernetes.io/ingress.class) are not rejections.
	cfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	ensureNamespace(t, dyn)
	k := kbtest.Builtin(t)
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			out := convertFixture(t, k, f)
			if f.wantManual {
				return
			}
			obj := unstructuredOf(t, out.Object)
			gvk := obj.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			reason, listed := notServedByTheTestServer[f.name]
			switch {
			case err != nil && !listed:
				t.Fatalf("the 1.35 API server does not serve %s: %v", gvk, err)
			case err != nil:
				t.Logf("not checked by the 1.35 API server: %s", reason)
				return
			case listed:
				t.Fatalf("the 1.35 API server serves %s: remove %s from notServedByTheTestServer (%s)", gvk, f.name, reason)
			}
			var res dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				obj.SetNamespace(fixtureNamespace)
				res = dyn.Resource(m.Resource).Namespace(fixtureNamespace)
			}
			_, err = res.Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			if err != nil {
				t.Fatalf("the API server rejects the conversion of %s: %v\n%s", f.path, err, marshal(t, out.Object))
			}
		})
	}
}

// ensureNamespace creates the fixtures' namespace unless it is there. It is left in place:
// helpers' tests share it concurrently and dry runs leave nothing in it.
func ensureNamespace(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": fixtureNamespace},
	}}
	_, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", fixtureNamespace, err)
	}
}

// unstructuredOf decodes a converted object's node as the API server's client sends it.
func unstructuredOf(t *testing.T, n *yaml.Node) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := n.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	// Through JSON, so numbers are int64 and float64 as unstructured objects hold them.
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u
}
