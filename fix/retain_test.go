package fix_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// retainTree is a directory of a changed file, a file left for a person, and an untouched one.
func retainTree(t *testing.T) string {
	argo := strings.Replace(flowSchema, "  name: batch-jobs\n", "  name: batch-jobs\n  labels:\n    helm.toolkit.fluxcd.io/name: apf\n    helm.toolkit.fluxcd.io/namespace: flux-system\n", 1)
	return tree(t, map[string]string{
		"mixed.yaml": "# head\n---\n" + deployment + "---\n" + flowSchema,
		"json.json":  `{"kind":"FlowSchema","apiVersion":"flowcontrol.apiserver.k8s.io/v1beta3","metadata":{"name":"b"},"spec":{"priorityLevelConfiguration":{"name":"x"}}}` + "\n",
		"flux.yaml":  argo, "other.yaml": deployment,
	})
}

// outputs are what a plan prints and writes: its diff, its report, the files Write leaves.
type outputs struct {
	diff, text, report string
	diffErr, writeErr  error
	written            map[string]string
}

func outputsOf(t *testing.T, retain fix.Retain) outputs {
	t.Helper()
	dir := retainTree(t)
	p, err := fix.Scan(dir, fix.Options{KB: kbtest.Builtin(t), Target: "1.37", SkipServed: true, Retain: retain})
	if err != nil {
		t.Fatal(err)
	}
	var o outputs
	var diff, text bytes.Buffer
	o.diffErr = p.WriteDiff(&diff)
	p.WriteText(&text)
	report, err := json.Marshal(p.Report())
	if err != nil {
		t.Fatal(err)
	}
	o.diff, o.text, o.report = diff.String(), text.String(), string(report)
	o.writeErr = p.Write()
	o.written = map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		o.written[e.Name()] = string(data)
	}
	return o
}

func TestEachRetainModeGivesItsOutputsAsAPlanKeepingEverythingDoes(t *testing.T) {
	all := outputsOf(t, fix.RetainAll)
	if all.diffErr != nil || all.writeErr != nil || all.diff == "" {
		t.Fatalf("RetainAll: diff %q (%v), write %v; want a diff and the files written", all.diff, all.diffErr, all.writeErr)
	}
	tests := []struct {
		name         string
		retain       fix.Retain
		diffs, write bool
	}{
		{"the diff alone makes the same diff", fix.RetainDiff, true, false},
		{"the new bytes and a digest write the same files", fix.RetainWrite, false, true},
		{"no bytes still make the same report", fix.RetainNone, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outputsOf(t, tt.retain)
			if got.report != all.report || got.text != all.text {
				t.Errorf("report %s\ntext %s\nwant as RetainAll's:\n%s\n%s", got.report, got.text, all.report, all.text)
			}
			if tt.diffs && (got.diffErr != nil || got.diff != all.diff) {
				t.Errorf("diff (%v):\n%s\nwant RetainAll's:\n%s", got.diffErr, got.diff, all.diff)
			}
			if !tt.diffs && !errors.Is(got.diffErr, fix.ErrNotRetained) {
				t.Errorf("WriteDiff: %v; want ErrNotRetained", got.diffErr)
			}
			if tt.write && (got.writeErr != nil || !reflect.DeepEqual(got.written, all.written)) {
				t.Errorf("Write (%v) left %v; want RetainAll's %v", got.writeErr, got.written, all.written)
			}
			if !tt.write && !errors.Is(got.writeErr, fix.ErrNotRetained) {
				t.Errorf("Write: %v; want ErrNotRetained", got.writeErr)
			}
			if !tt.write && got.written["mixed.yaml"] == all.written["mixed.yaml"] {
				t.Errorf("mixed.yaml was written without the bytes to write")
			}
		})
	}
}

func TestAPlanKeepingOnlyTheDiffHoldsNeitherVersionOfAChangedFile(t *testing.T) {
	for _, retain := range []fix.Retain{fix.RetainDiff, fix.RetainNone} {
		p, err := fix.Scan(retainTree(t), fix.Options{KB: kbtest.Builtin(t), Target: "1.37", SkipServed: true, Retain: retain})
		if err != nil {
			t.Fatal(err)
		}
		if c := p.Changed(); len(c) != 2 || c[0].Before != nil || c[0].After != nil || c[1].Before != nil || c[1].After != nil {
			t.Errorf("Retain %d: changed %v, with bytes kept; want json.json and mixed.yaml without their bytes", retain, paths(c))
		}
	}
}
