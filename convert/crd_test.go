package convert

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// TestCRDFixturesConvertAsTheAPIServerDoes is the oracle for CRDs, which kubectl-convert does
// not convert: each CRD fixture goes through apiextensions-apiserver's own scheme (v1beta1
// defaults, v1beta1 → internal → v1, v1 defaults) and our conversion, defaulted as v1, must be
// equal to it.
func TestCRDFixturesConvertAsTheAPIServerDoes(t *testing.T) {
	scheme := runtime.NewScheme()
	apiextinstall.Install(scheme)
	k := kbtest.Builtin(t)
	paths, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "apiextensions.k8s.io_v1beta1_*.yaml"))
	if len(paths) == 0 {
		t.Fatal("no CRD fixtures")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out := Object(k, parseDoc(t, string(raw)), "1.37")
			if strings.Contains(string(raw), "\n# want: manual") || strings.HasPrefix(string(raw), "# want: manual") {
				if out.Object != nil || len(out.Manual) == 0 {
					t.Fatalf("want a conversion left to a person, got %+v", out)
				}
				return
			}
			if out.Object == nil {
				t.Fatalf("not converted: %+v", out.Manual)
			}
			want := serverConversion(t, scheme, raw)
			var got apiextv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict([]byte(render(t, out.Object)), &got); err != nil {
				t.Fatalf("our conversion is not a v1 CRD: %v", err)
			}
			scheme.Default(&got)
			// v1 refuses preserveUnknownFields: true; where every schema keeps unknown fields
			// we write false and the server's conversion keeps v1beta1's default.
			if noted(out, "/spec/preserveUnknownFields") {
				want.Spec.PreserveUnknownFields = false
			}
			if !equality.Semantic.DeepEqual(&want, &got) {
				w, _ := json.MarshalIndent(want, "", " ")
				g, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("ours differs from the API server's conversion\nwant %s\ngot  %s", w, g)
			}
		})
	}
}

// serverConversion converts a v1beta1 CRD manifest to v1 with apiextensions-apiserver's scheme.
func serverConversion(t *testing.T, scheme *runtime.Scheme, raw []byte) apiextv1.CustomResourceDefinition {
	t.Helper()
	var old apiextv1beta1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &old); err != nil {
		t.Fatal(err)
	}
	apiextv1beta1.SetObjectDefaults_CustomResourceDefinition(&old)
	var internal apiextensions.CustomResourceDefinition
	var out apiextv1.CustomResourceDefinition
	if err := scheme.Convert(&old, &internal, nil); err != nil {
		t.Fatal(err)
	}
	if err := scheme.Convert(&internal, &out, nil); err != nil {
		t.Fatal(err)
	}
	out.APIVersion, out.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	scheme.Default(&out)
	return out
}

func noted(out Outcome, path string) bool {
	for _, n := range out.Notes {
		if n.Path == path {
			return true
		}
	}
	return false
}
