package convert_test

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// stepCase converts in (a manifest) for target 1.37 and checks the result: every string of
// want appears in the converted manifest (written in block style), none of absent does, and the outcome is Manual
// exactly when manual is set (its message containing manual).
type stepCase struct {
	name   string
	in     string
	want   []string
	absent []string
	note   string
	manual string
}

func runSteps(t *testing.T, cases []stepCase) {
	t.Helper()
	k := kbtest.Builtin(t)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(strings.TrimSpace(tt.in)+"\n"), &doc); err != nil {
				t.Fatal(err)
			}
			out := convert.Object(k, doc.Content[0], "1.37")
			if tt.manual != "" {
				if out.Object != nil || len(out.Manual) == 0 || !strings.Contains(out.Manual[0].Message, tt.manual) {
					t.Fatalf("want a conversion left to a person saying %q, got %+v", tt.manual, out)
				}
				return
			}
			if out.Object == nil {
				t.Fatalf("not converted: %+v", out)
			}
			block(out.Object)
			var b strings.Builder
			enc := yaml.NewEncoder(&b)
			enc.SetIndent(2)
			if err := enc.Encode(out.Object); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("unexpected %q in:\n%s", a, got)
				}
			}
			if tt.note != "" && !hasNote(out, tt.note) {
				t.Errorf("no note saying %q: %+v", tt.note, out.Notes)
			}
		})
	}
}

// block writes every mapping and sequence in block style, so that the expectations read the
// same whatever style the input used.
func block(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style &^= yaml.FlowStyle
	}
	for _, c := range n.Content {
		block(c)
	}
}

func hasNote(out convert.Outcome, s string) bool {
	for _, n := range out.Notes {
		if strings.Contains(n.Message, s) {
			return true
		}
	}
	return false
}
