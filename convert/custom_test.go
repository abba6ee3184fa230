package convert

import (
	"os"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1alpha1
      served: false
      storage: false
      schema:
        openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {legacySize: {type: integer}}}}}
    - name: v1beta1
      served: false
      storage: false
      schema:
        openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
    - name: v2
      served: true
      storage: false
`

func TestCustomResourcesMoveOnlyBetweenIdenticalSchemas(t *testing.T) {
	tests := []struct {
		name, apiVersion, wantTo, wantManual string
	}{
		{"an unserved version with the storage version's schema changes its apiVersion", "example.com/v1beta1", "example.com/v1", ""},
		{"a served version is left alone", "example.com/v1", "example.com/v1", ""},
		{"a version whose schema differs needs a person", "example.com/v1alpha1", "example.com/v1alpha1", "no version the CustomResourceDefinition widgets.example.com serves has the schema of v1alpha1"},
		{"a version the CRD does not list needs a person", "example.com/v0", "example.com/v0", "does not list version v0"},
	}
	crd := parseDoc(t, widgetCRD)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parseDoc(t, "apiVersion: "+tt.apiVersion+"\nkind: Widget\nmetadata:\n  name: w # kept\nspec:\n  size: 3\n")
			out := CustomResource(obj, crd, "1.37")
			if out.To.APIVersion() != tt.wantTo {
				t.Errorf("To = %s, want %s", out.To.APIVersion(), tt.wantTo)
			}
			switch {
			case tt.wantManual != "":
				if len(out.Manual) != 1 || !strings.Contains(out.Manual[0].Message, tt.wantManual) || out.Object != nil {
					t.Errorf("want Manual %q, got %+v", tt.wantManual, out)
				}
			case tt.wantTo == tt.apiVersion:
				if out.Object != nil || len(out.Manual) > 0 {
					t.Errorf("want a zero outcome, got %+v", out)
				}
			default:
				want := "apiVersion: " + tt.wantTo + "\nkind: Widget\nmetadata:\n  name: w # kept\nspec:\n  size: 3\n"
				if out.Object == nil || render(t, out.Object) != want || len(out.Notes) != 1 {
					t.Errorf("want\n%s\ngot %+v", want, out)
				}
			}
		})
	}
}

// A CRD's digest answers as the CRD does, for every case of the table above and the webhook.
func TestACRDsDigestAnswersAsTheCRD(t *testing.T) {
	crds := []string{widgetCRD, strings.Replace(widgetCRD, "  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n", 1),
		strings.Replace(widgetCRD, "name: v2\n      served: true", "name: v2\n      served: false", 1)}
	for _, text := range crds {
		crd := parseDoc(t, text)
		for _, v := range []string{"v1alpha1", "v1beta1", "v1", "v2", "v0"} {
			obj := parseDoc(t, "apiVersion: example.com/"+v+"\nkind: Widget\nspec:\n  size: 3\n")
			full, digest := CustomResource(obj, crd, "1.37"), CustomResource(obj, CRDDigest(crd), "1.37")
			if full.To != digest.To || len(full.Manual) != len(digest.Manual) || (full.Object == nil) != (digest.Object == nil) ||
				len(full.Manual) > 0 && full.Manual[0].Message != digest.Manual[0].Message {
				t.Errorf("%s: the CRD answers %+v, its digest %+v", v, full, digest)
			}
		}
	}
}

func TestAVersionWithoutASchemaNeedsAPerson(t *testing.T) {
	crd := parseDoc(t, strings.Replace(widgetCRD, "name: v2\n      served: true", "name: v2\n      served: false", 1))
	out := CustomResource(parseDoc(t, "apiVersion: example.com/v2\nkind: Widget\n"), crd, "1.37")
	if len(out.Manual) != 1 || !strings.Contains(out.Manual[0].Message, "has no schema") {
		t.Errorf("want Manual for no schema, got %+v", out)
	}
}

func TestACRDThatConvertsThroughAWebhookNeedsAPerson(t *testing.T) {
	withWebhook := strings.Replace(widgetCRD, "  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n", 1)
	out := CustomResource(parseDoc(t, "apiVersion: example.com/v1beta1\nkind: Widget\n"), parseDoc(t, withWebhook), "1.37")
	if len(out.Manual) != 1 || !strings.Contains(out.Manual[0].Message, "through a webhook") || out.Object != nil {
		t.Errorf("want Manual naming the webhook, got %+v", out)
	}
}

func TestTheExampleFlowSchemaConvertsToV1For137(t *testing.T) {
	raw, err := os.ReadFile("../examples/manifests/flowcontrol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(raw), "\n---", 2)[0]
	out := Object(kbtest.Builtin(t), parseDoc(t, first), "1.37")
	if out.Object == nil || out.To.APIVersion() != "flowcontrol.apiserver.k8s.io/v1" || len(out.Manual)+len(out.Notes) > 0 {
		t.Fatalf("want a plain conversion to v1, got %+v", out)
	}
}
