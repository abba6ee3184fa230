package convert

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// parseDoc reads one YAML document and returns its top mapping.
func parseDoc(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.TrimLeft(src, "\n")), &doc); err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc.Content[0]
}

// render writes a node as YAML.
func render(t testing.TB, n *yaml.Node) string {
	t.Helper()
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.String()
}

// stepCase is one conversion a step must do: the object, and either the YAML it becomes or
// the Manual remarks it must raise (substrings).
type stepCase struct {
	name   string
	target string
	in     string
	want   string
	notes  []string
	manual []string
}

func runStepCases(t *testing.T, cases []stepCase) {
	k := kbtest.Builtin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := c.target
			if target == "" {
				target = "1.37"
			}
			in := parseDoc(t, c.in)
			before := render(t, in)
			out := Object(k, in, target)
			if render(t, in) != before {
				t.Error("the input object was changed")
			}
			requireRemarks(t, "manual", out.Manual, c.manual)
			if len(c.manual) > 0 {
				if out.Object != nil {
					t.Error("an object needing a person came back converted")
				}
				return
			}
			requireRemarks(t, "notes", out.Notes, c.notes)
			if out.Object == nil {
				t.Fatalf("no object; manual %+v", out.Manual)
			}
			if got, want := render(t, out.Object), strings.TrimLeft(c.want, "\n"); got != want {
				t.Errorf("converted to\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// requireRemarks requires one remark per wanted substring, in order.
func requireRemarks(t *testing.T, what string, got []Remark, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d %+v, want %d %q", what, len(got), got, len(want), want)
		return
	}
	for i, w := range want {
		if !strings.Contains(got[i].Message, w) {
			t.Errorf("%s %d: %q does not say %q", what, i, got[i].Message, w)
		}
	}
}
