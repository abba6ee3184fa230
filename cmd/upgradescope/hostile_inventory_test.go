package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// The hostile inventories (650,000 repeated rows in 60 MB; an unknown top-level field
// of 56 MB) are refused by `eval` for their size, and the same shapes under the size bound
// (150,000 rows; a 15 MB unknown field) naming the JSON pointer, in one streaming pass
// before anything is decoded: exit 1 below 256 MiB peak RSS, where main ran for minutes into
// gigabytes. Peaks are the kernel's count for the child (see TestAGzipBombStaysBelow256MiB).
func TestHostileInventoriesAreRefusedNamingTheJSONPointerBelow256MiB(t *testing.T) {
	buildBinary(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(w *bufio.Writer)
		want  string
	}{
		{"650,000 repeated apiUsage rows", repeatedRows(650_000), "larger than 16 MiB"},
		{"150,000 repeated apiUsage rows", repeatedRows(150_000), "/apiUsage: maxItems: got more than 5,000, want 5,000"},
		{"an unknown top-level field of 56 MB", unknownField(56_000_000), "larger than 16 MiB"},
		{"an unknown top-level field of 15 MB", unknownField(15_000_000), "/junk: additional property not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeInventory(t, dir, tc.write)
			out, peak, code := runChild(t, "eval", "--inventory", path, "--target", "1.37")
			if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, path) {
				t.Errorf("exit %d: %s\nwant exit 1 naming %s and %q", code, out, path, tc.want)
			}
			if peak > 256<<20 {
				t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
			}
		})
	}
}

// The costliest document the bounds admit is one of long strings near the size bound: each
// string is held as JSON, as Go values and as OPA values at once. It is judged below 256 MiB.
func TestADocumentOfLongStringsAtTheSizeBoundIsEvaluatedBelow256MiB(t *testing.T) {
	buildBinary(t)
	path := writeInventory(t, t.TempDir(), func(w *bufio.Writer) {
		w.WriteString(`"apiUsage": [`)
		rows := inventory.MaxDocumentBytes / (inventory.MaxObjectRefs * (inventory.MaxStringLength + 40))
		for i := range rows {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"group":"extensions","version":"v%dbeta1","kind":"Ingress","count":100,"namespaces":{"web":100},"objects":[`, i)
			for j := range inventory.MaxObjectRefs {
				if j > 0 {
					w.WriteByte(',')
				}
				name := fmt.Sprintf("%06d-%04d", i, j)
				fmt.Fprintf(w, `{"namespace":"web","name":"%s%s"}`, name, strings.Repeat("x", inventory.MaxStringLength-len(name)))
			}
			w.WriteString(`]}`)
		}
		w.WriteString(`]`)
	})
	out, peak, code := runChild(t, "eval", "--inventory", path, "--target", "1.37", "--fail-on", "never", "-o", "json", atBounds)
	if code != 0 {
		t.Errorf("exit %d, want 0: %.2000s", code, out)
	}
	if peak > 256<<20 {
		t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
	}
}

// Many distinct values in one row, as teams: 10,000 namespaces each owned by a team of its
// own, all holding a removed API. Every team gets its result, below 256 MiB, where main
// compared every team with every other and ran past two minutes.
func TestTenThousandTeamsInOneRowAreEachJudged(t *testing.T) {
	buildBinary(t)
	const teams = inventory.MaxNamespaceCounts
	path := writeInventory(t, t.TempDir(), func(w *bufio.Writer) {
		w.WriteString(`"apiUsage": [{"group":"extensions","version":"v1beta1","kind":"Ingress","count":10000,"namespaces":{`)
		for i := range teams {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `"ns-%d":1`, i)
		}
		w.WriteString(`}}], "namespaces": [`)
		for i := range teams {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"name":"ns-%d","team":"team-%d"}`, i, i)
		}
		w.WriteString(`]`)
	})
	out, peak, code := runChild(t, "eval", "--inventory", path, "--target", "1.37", "--fail-on", "never", "-o", "json", atBounds)
	var rep struct {
		Targets []struct {
			Teams map[string]struct{ Verdict string } `json:"teams"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Targets) != 1 {
		t.Fatalf("exit %d, %v: %.2000s", code, err, out)
	}
	if got := rep.Targets[0].Teams; len(got) != teams || got["team-9999"].Verdict != "blocked" {
		t.Errorf("%d teams, team-9999 %q; want %d, each blocked", len(got), got["team-9999"].Verdict, teams)
	}
	if peak > 256<<20 {
		t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
	}
}

// Many distinct values of one add-on: 5,000 versions of the ingress-nginx controller image.
// They are one add-on, judged below 256 MiB, where main walked every claim and detection per
// version and ran past a minute.
func TestFiveThousandVersionsOfOneAddonAreJudgedAsOne(t *testing.T) {
	buildBinary(t)
	path := writeInventory(t, t.TempDir(), func(w *bufio.Writer) {
		w.WriteString(`"apiUsage": [], "workloadImages": [{"repository": "registry.k8s.io/ingress-nginx/controller", "versions": [`)
		for i := range 5000 {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"tag":"v1.%d.%d","namespaces":["ns-%d"],"labelSets":[{"app.kubernetes.io/name":"ingress-nginx"}]}`, i/100, i%100, i)
		}
		w.WriteString(`]}]`)
	})
	out, peak, code := runChild(t, "eval", "--inventory", path, "--target", "1.37", "--fail-on", "never", "-o", "json", atBounds)
	if code != 0 || !strings.Contains(out, `"key": "eol-addon/ingress-nginx"`) {
		t.Errorf("exit %d, want 0 and the add-on judged: %.2000s", code, out)
	}
	if peak > 256<<20 {
		t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
	}
}

func repeatedRows(n int) func(w *bufio.Writer) {
	return func(w *bufio.Writer) {
		w.WriteString(`"apiUsage": [`)
		for i := range n {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(`{"group":"extensions","version":"v1beta1","kind":"Ingress","count":1,"namespaces":{"web":1}}`)
		}
		w.WriteString(`]`)
	}
}

func unknownField(size int) func(w *bufio.Writer) {
	return func(w *bufio.Writer) {
		w.WriteString(`"apiUsage": [], "junk": "`)
		w.WriteString(strings.Repeat("x", size))
		w.WriteString(`"`)
	}
}

// writeInventory streams a document whose other fields are valid, so the hostile part is what
// is refused.
func writeInventory(t *testing.T, dir string, body func(w *bufio.Writer)) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "inventory-*.json")
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {"api-usage": {"available": true}}, `)
	body(w)
	w.WriteString("}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// atBounds gives the evaluation of a document at the inventory's bounds time to finish on a
// loaded machine: such a document takes seconds (a real cluster's, under 0.1 s), and these
// tests assert what it is judged, not the default deadline.
const atBounds = "--policy-timeout=2m"

// runChild runs the binary and returns its combined output, peak RSS in bytes (measured as
// the adversarial suite measures it) and exit code. The deadline only keeps a regression from
// hanging the suite; nothing asserts on time.
func runChild(t *testing.T, args ...string) (string, int64, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, peak, out := measured(ctx, t, "", agentBin, args...)
	t.Logf("%s: peak RSS %d MiB", args[0], peak>>20)
	return out, peak, code
}

// Issue 13, item 5: a million removed Ingresses in one file, each in a namespace of its own,
// took minutes to scan. Recorded from the line scan and aggregated as the file is read, they
// are judged in seconds, the row listing its bounded namespaces and counting the rest.
func TestAMillionObjectsInOneFileAreScannedWithinBounds(t *testing.T) {
	runHostile(t, []hostile{{
		name: "a million removed Ingresses in distinct namespaces are judged",
		args: func(t *testing.T, dir string) []string {
			f, err := os.Create(filepath.Join(dir, "million.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			w := bufio.NewWriterSize(f, 1<<20)
			for i := range 1_000_000 {
				fmt.Fprintf(w, "---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: i%d\n  namespace: ns%d\n", i, i)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			return []string{"scan", "--files", "million.yaml", "--target", "1.37", pinned}
		},
		code: 2, want: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress removed in 1.22 (1000000 objects)", "ns0/i0 (million.yaml:2)"},
	}})
}

// One file of watched objects, each in a namespace of its own, past the bound a row counts:
// `inventory` lists MaxNamespaceCounts namespaces and counts the rest as omitted, and `eval`
// accepts what `inventory` wrote, both below 256 MiB.
func TestAFileOfDistinctNamespacesIsInventoriedWithinTheBoundAndEvaluated(t *testing.T) {
	buildBinary(t)
	const objects = inventory.MaxNamespaceCounts + 5000
	dir := t.TempDir()
	manifests := filepath.Join(dir, "ingresses.yaml")
	f, err := os.Create(manifests)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range objects {
		fmt.Fprintf(w, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: ns-%d\n---\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out, peak, code := runChild(t, "inventory", "--files", manifests)
	if code != 0 || peak > 256<<20 {
		t.Fatalf("inventory: exit %d, peak RSS %d MiB; want 0 under 256 MiB\n%.2000s", code, peak>>20, out)
	}
	var doc inventory.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.APIUsage) != 1 {
		t.Fatalf("inventory printed %.2000s (%v), want one row", out, err)
	}
	if u := doc.APIUsage[0]; u.Count != objects || len(u.Namespaces) != inventory.MaxNamespaceCounts || u.NamespacesOmitted != 5000 {
		t.Errorf("row counts %d objects in %d namespaces, %d omitted; want %d, %d, 5000",
			u.Count, len(u.Namespaces), u.NamespacesOmitted, objects, inventory.MaxNamespaceCounts)
	}
	inv := filepath.Join(dir, "inventory.json")
	if err := os.WriteFile(inv, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	out, peak, code = runChild(t, "eval", "--inventory", inv, "--target", "1.37", "--fail-on", "never", atBounds)
	if code != 0 || !strings.Contains(out, "extensions/v1beta1") || peak > 256<<20 {
		t.Errorf("eval: exit %d, peak RSS %d MiB; want 0 under 256 MiB and the removed API reported\n%.2000s", code, peak>>20, out)
	}
}
