package render_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

// ingress picks its apiVersion the way ingress-nginx 3.x and many charts of its time did.
const ingress = `{{- if semverCompare ">=1.19-0" .Capabilities.KubeVersion.GitVersion }}
apiVersion: networking.k8s.io/v1
{{- else }}
apiVersion: networking.k8s.io/v1beta1
{{- end }}
kind: Ingress
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
`

// pdb asks the API version set for the kind, as bitnami's charts do.
const pdb = `{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}
apiVersion: policy/v1
{{- else }}
apiVersion: policy/v1beta1
{{- end }}
kind: PodDisruptionBudget
metadata:
  name: x
`

const legacy = `{{- if .Values.legacy }}
apiVersion: extensions/v1beta1
{{- else }}
apiVersion: apps/v1
{{- end }}
kind: Deployment
metadata:
  name: x
`

const hook = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-upgrade
`

var rel = render.Release{Name: "web", Namespace: "shop"}

func noPolicyV1(entry string) bool {
	return !strings.HasPrefix(entry, "policy/v1/") && entry != "policy/v1"
}

func TestTemplatesRenderAsOnTheTarget(t *testing.T) {
	tests := []struct {
		name   string
		target string
		served render.Served
		tpl    string
		values map[string]any
		want   []string
	}{
		{"a KubeVersion comparison sees the target", "1.18", nil, ingress, nil, []string{"networking.k8s.io/v1beta1 Ingress"}},
		{"a KubeVersion comparison sees a newer target", "1.36", nil, ingress, nil, []string{"networking.k8s.io/v1 Ingress"}},
		{"the version set lists kinds the target serves", "1.36", nil, pdb, nil, []string{"policy/v1 PodDisruptionBudget"}},
		{"the version set leaves out what the target does not serve", "1.20", noPolicyV1, pdb, nil, []string{"policy/v1beta1 PodDisruptionBudget"}},
		{"the release's values are read", "1.36", nil, legacy, map[string]any{"legacy": true}, []string{"extensions/v1beta1 Deployment"}},
		{"the chart's defaults apply under them", "1.36", nil, legacy, nil, []string{"apps/v1 Deployment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{"t.yaml": tt.tpl}, Values: map[string]any{"legacy": false}}.Build()
			got, err := render.APIs(context.Background(), ch, tt.values, rel, tt.target, tt.served)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("APIs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHooksAreListedAndNotesAndCRDsAreNot(t *testing.T) {
	ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{
		"job.yaml": hook, "NOTES.txt": "apiVersion: v1\nkind: Secret\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	}}.Build()
	ch.Files = append(ch.Files, &chart.File{Name: "crds/crd.yaml", Data: []byte("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n")})
	got, err := render.APIs(context.Background(), ch, nil, rel, "1.36", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"batch/v1 Job", "v1 ConfigMap"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("APIs = %v, want %v", got, want)
	}
}

func TestATemplateErrorNamesTheChartAndNotTheValues(t *testing.T) {
	ch := charttest.Chart{Name: "web", Version: "2.1.0", Templates: map[string]string{
		"t.yaml": `{{ required "image.tag is required" .Values.image.tag }}`,
	}}.Build()
	_, err := render.APIs(context.Background(), ch, map[string]any{"image": map[string]any{"password": "hunter2"}}, rel, "1.36", nil)
	if err == nil {
		t.Fatal("rendering a failing template succeeded")
	}
	for _, want := range []string{"web 2.1.0", "template web/templates/t.yaml:1:3 failed (fail or required)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %q shows a value", err)
	}
}

func TestAManifestPastTheBoundIsRefused(t *testing.T) {
	ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{
		"t.yaml": `{{ range until 2000 }}{{ $.Values.pad }}{{ end }}`,
	}, Values: map[string]any{"pad": strings.Repeat("#", 10<<10)}}.Build()
	if _, err := render.APIs(context.Background(), ch, nil, rel, "1.36", nil); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Fatalf("err = %v, want the bound named", err)
	}
}

func TestRenderingLeavesTheChartAsItWas(t *testing.T) {
	sub := charttest.Chart{Name: "db", Version: "1.0.0", Templates: map[string]string{"s.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\n"}}.Build()
	ch := charttest.Chart{Name: "web", Version: "1.0.0", Values: map[string]any{"db": map[string]any{"enabled": true}}}.Build()
	ch.Metadata.Dependencies = []*chartv2.Dependency{{Name: "db", Version: "1.0.0", Condition: "db.enabled"}}
	ch.AddDependency(sub)
	off := map[string]any{"db": map[string]any{"enabled": false}}
	for _, c := range []struct {
		values map[string]any
		want   []string
	}{{off, []string{}}, {nil, []string{"v1 Service"}}} {
		got, err := render.APIs(context.Background(), ch, c.values, rel, "1.36", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("APIs at %v = %v, want %v (a rendering changed the chart)", c.values, got, c.want)
		}
	}
	if enabled := off["db"].(map[string]any)["enabled"]; enabled != false {
		t.Fatalf("the caller's values were changed: db.enabled = %v", enabled)
	}
}

func TestCapabilitiesNameTheTargetPatchZero(t *testing.T) {
	for _, target := range []string{"1.36", "v1.36.0"} {
		caps, err := render.Capabilities(target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := caps.KubeVersion.Version; got != "v1.36.0" {
			t.Errorf("KubeVersion of %q = %s, want v1.36.0", target, got)
		}
	}
	if _, err := render.Capabilities("next", nil); err == nil {
		t.Error("a target that is no version was accepted")
	}
}

func TestARenderErrorNeverQuotesAValue(t *testing.T) {
	tests := []struct {
		name     string
		template string
		values   map[string]any
		secret   string
		want     string
	}{
		{
			name:     "tpl quotes the whole string it cannot parse",
			template: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  extra: {{ tpl .Values.extra . | quote }}\n",
			values:   map[string]any{"extra": "password: {{ hunter2"},
			secret:   "hunter2", want: "failed calling tpl",
		},
		{
			name:     "tpl quotes a value with a newline as Go quotes it",
			template: "{{ tpl .Values.extra . }}",
			values:   map[string]any{"extra": "token: s3cr3t\n{{ .Oops"},
			secret:   "s3cr3t", want: "cm.yaml",
		},
		{
			name:     "fail prints a value nested in a list",
			template: `{{ fail (printf "bad host %s" (index .Values.hosts 1).name) }}`,
			values:   map[string]any{"hosts": []any{map[string]any{"name": "a"}, map[string]any{"name": "db.internal.example"}}},
			secret:   "db.internal.example", want: "cm.yaml:1:3 failed (fail or required)",
		},
		{
			name:     "fail prints a value transformed",
			template: `{{ fail (printf "bad password %s / %s" (upper .Values.password) (b64enc .Values.password)) }}`,
			values:   map[string]any{"password": "hunter2-secret"},
			secret:   "HUNTER2", want: "cm.yaml",
		},
		{
			name:     "required names a number a parameter set",
			template: `{{ required (printf "pin %v is wrong" .Values.pin) nil }}`,
			values:   map[string]any{"pin": 84736251},
			secret:   "84736251", want: "failed (fail or required)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{"cm.yaml": tt.template}}.Build()
			_, err := render.APIs(context.Background(), ch, tt.values, rel, "1.36", nil)
			if err == nil {
				t.Fatal("rendering a failing template succeeded")
			}
			if strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("error %q shows a value", err)
			}
			for _, want := range []string{"web 1.0.0", tt.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}
