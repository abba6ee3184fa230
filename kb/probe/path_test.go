package probe

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const deployment = `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "web", "namespace": "shop",
    "labels": {"app": "web", "node-role.kubernetes.io/master": ""},
    "annotations": {"kubernetes.io/ingress.class": "nginx", "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
  "spec": {"replicas": 3, "template": {"spec": {
    "containers": [
      {"name": "app", "image": "shop/web:1.2", "volumeMounts": [{"name": "docker", "mountPath": "/var/run/docker.sock"}]},
      {"name": "sidecar", "image": "envoy:1.30", "env": [{"name": "A", "value": "1"}, {"name": "B"}]}
    ],
    "volumes": [
      {"name": "docker", "hostPath": {"path": "/var/run/docker.sock"}},
      {"name": "cache", "emptyDir": {}},
      {"name": "repo", "gitRepo": {"repository": "https://example.com/r.git"}}
    ],
    "tolerations": [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}]
  }}}
}`

func object(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(deployment), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAPathFindsEveryValueItReachesWithItsConcretePath(t *testing.T) {
	tests := []struct {
		name, path string
		want       []Match
	}{
		{"a scalar field", "spec.replicas", []Match{{"spec.replicas", 3.0}}},
		{"every element of a list", "spec.template.spec.volumes[*].hostPath.path",
			[]Match{{"spec.template.spec.volumes[0].hostPath.path", "/var/run/docker.sock"}}},
		{"lists within lists", "spec.template.spec.containers[*].volumeMounts[*].mountPath",
			[]Match{{"spec.template.spec.containers[0].volumeMounts[0].mountPath", "/var/run/docker.sock"}}},
		{"an annotation by a key with dots and slashes", `metadata.annotations["kubernetes.io/ingress.class"]`,
			[]Match{{`metadata.annotations["kubernetes.io/ingress.class"]`, "nginx"}}},
		{"a label whose value is empty", `metadata.labels["node-role.kubernetes.io/master"]`,
			[]Match{{`metadata.labels["node-role.kubernetes.io/master"]`, ""}}},
		{"every value of a map, in key order", "metadata.labels[*]",
			[]Match{{`metadata.labels["app"]`, "web"}, {`metadata.labels["node-role.kubernetes.io/master"]`, ""}}},
		{"a field some elements lack", "spec.template.spec.containers[*].env[*].value",
			[]Match{{"spec.template.spec.containers[1].env[0].value", "1"}}},
		{"an object as the value", "spec.template.spec.volumes[*].emptyDir",
			[]Match{{"spec.template.spec.volumes[1].emptyDir", map[string]any{}}}},
		{"a field that is absent", "spec.template.spec.hostNetwork", nil},
		{"a key that is absent", `metadata.annotations["missing"]`, nil},
		{"a field name where a list is", "spec.template.spec.volumes.name", nil},
		{"a wildcard over a scalar", "spec.replicas[*]", nil},
		{"a path past a scalar", "metadata.name.first", nil},
		{"the values of the keys a prefix starts", `metadata.labels[^"node-role."]`,
			[]Match{{`metadata.labels["node-role.kubernetes.io/master"]`, ""}}},
		{"a prefix no key starts", `metadata.labels[^"team"]`, nil},
		{"a prefix over a list", `spec.template.spec.containers[^"a"]`, nil},
	}
	obj := object(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MustParsePath(tt.path).Find(obj)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Find(%s) = %#v, want %#v", tt.path, got, tt.want)
			}
		})
	}
}

func TestABadPathIsRefusedWithWhereItStops(t *testing.T) {
	tests := []struct{ path, says string }{
		{"", "offset 0: want a field name"},
		{".spec", "offset 0: want a field name"},
		{"spec..replicas", "offset 5: want a field name"},
		{"spec.replicas.", "offset 14: want a field name"},
		{"spec[0]", `offset 4: want [*], ["key"] or [^"prefix"]`},
		{"spec[*", `offset 4: want [*], ["key"] or [^"prefix"]`},
		{`metadata.labels["app"`, `offset 15: want ["key"] or [^"prefix"] with the key in double quotes`},
		{`metadata.labels['app']`, `offset 15: want [*], ["key"] or [^"prefix"]`},
		{`metadata.labels[^""]`, `offset 15: an empty prefix`},
		{`metadata.labels[^app]`, `offset 15: want [*], ["key"] or [^"prefix"]`},
		{"spec replicas", "offset 4: want '.' between fields"},
		{"spec.a$b", "offset 6: want '.' between fields"},
		{strings.Repeat("a.", 64) + "a", "more than 64 steps"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := ParsePath(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("ParsePath(%q) = %v, want an error saying %q", tt.path, err, tt.says)
			}
		})
	}
}

func TestAPathReadsBackAsWritten(t *testing.T) {
	for _, text := range []string{"spec.replicas", `metadata.annotations["a.b/c\"d"]`, "spec.x[*][*].y", `a[^"b/"].c`} {
		if got := MustParsePath(text).String(); got != text {
			t.Errorf("String() = %q, want %q", got, text)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, seed := range []string{"spec.replicas", `metadata.labels["a.b/c"]`, `metadata.annotations[^"c."]`, "a[*][*].b", `a["\u00e9\""]`, "a[", "a.", ""} {
		f.Add(seed)
	}
	var obj any
	if err := json.Unmarshal([]byte(deployment), &obj); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePath(text)
		if err != nil {
			return
		}
		if p.String() != text {
			t.Errorf("String() = %q, want %q", p.String(), text)
		}
		for _, m := range p.Find(obj) {
			if m.Path == "" {
				t.Errorf("a match of %q without its path", text)
			}
		}
	})
}

func TestMissingNamesWhereEachBranchFallsShort(t *testing.T) {
	tests := []struct {
		name, path string
		want       []string
	}{
		{"a field every container has", "spec.template.spec.containers[*].image", nil},
		{"a field one container lacks", "spec.template.spec.containers[*].env",
			[]string{"spec.template.spec.containers[0]"}},
		{"a field every container lacks", "spec.template.spec.containers[*].resources.limits",
			[]string{"spec.template.spec.containers[0]", "spec.template.spec.containers[1]"}},
		{"lists within lists, where an element lacks the field", "spec.template.spec.containers[*].env[*].value",
			[]string{"spec.template.spec.containers[0]", "spec.template.spec.containers[1].env[1]"}},
		{"a wildcard over a map, where a value lacks the field", "metadata.labels[*].x",
			[]string{`metadata.labels["app"]`, `metadata.labels["node-role.kubernetes.io/master"]`}},
		{"a wildcard over an empty map opens no branch", "spec.template.spec.volumes[*].emptyDir[*]",
			[]string{"spec.template.spec.volumes[0]", "spec.template.spec.volumes[2]"}},
		{"a key that is present", `metadata.annotations["kubernetes.io/ingress.class"]`, nil},
		{"a key that is absent", `metadata.annotations["missing"]`, []string{"metadata.annotations"}},
		{"a key step after a key step", `metadata.annotations["kubernetes.io/ingress.class"]["x"]`,
			[]string{`metadata.annotations["kubernetes.io/ingress.class"]`}},
		{"a field at the top", "status", []string{""}},
		{"a field below a scalar", "spec.replicas.x", []string{"spec.replicas"}},
		{"a wildcard over a scalar", "spec.replicas[*]", []string{"spec.replicas"}},
		{"a field name where a list is", "spec.template.spec.volumes.name", []string{"spec.template.spec.volumes"}},
		{"a scalar reached at the end is present", "metadata.name", nil},
		{"a prefix no key starts opens no branch", `metadata.labels[^"team"].x`, nil},
		{"a prefix over a list falls short there", `spec.template.spec.containers[^"a"]`, []string{"spec.template.spec.containers"}},
	}
	obj := object(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := MustParsePath(tt.path)
			got := p.Missing(obj)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Missing(%s) = %q, want %q", tt.path, got, tt.want)
			}
			// Without wildcards a path is either found or missing, never both nor neither.
			if !strings.Contains(tt.path, "[*]") && !strings.Contains(tt.path, "[^") && (len(p.Find(obj)) == 0) == (len(got) == 0) {
				t.Errorf("%s: Find %v and Missing %q disagree", tt.path, p.Find(obj), got)
			}
		})
	}
}

func TestMissingTreatsNullAsUnset(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"a": nil, "l": []any{nil, map[string]any{"b": 1.0}}}}
	tests := []struct {
		path string
		want []string
	}{
		{"spec.a", []string{"spec"}},
		{"spec.a.b", []string{"spec"}},
		{"spec.l[*].b", []string{"spec.l[0]"}},
		{`spec["a"]`, []string{"spec"}},
	}
	for _, tt := range tests {
		if got := MustParsePath(tt.path).Missing(obj); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Missing(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
