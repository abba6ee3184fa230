package kb_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

func TestOldestSupportedIsTheOldestMinorAProviderStillServesThatDay(t *testing.T) {
	eks := map[string]any{"versions": map[string]any{
		"1.30": map[string]any{"standardEnd": "2025-07-23", "extendedEnd": "2026-07-23"},
		"1.31": map[string]any{"standardEnd": "2025-11-26", "extendedEnd": "2026-11-26"},
	}}
	// no extended support: a standard end is the end
	gke := map[string]any{"versions": map[string]any{"1.29": map[string]any{"standardEnd": "2026-03-01"}}}
	old := map[string]any{"versions": map[string]any{"1.9": map[string]any{"standardEnd": "2030-01-01"}}}
	tests := []struct {
		name      string
		calendars map[string]any
		day, want string
		ok        bool
	}{
		{"a minor past standard support, in extended support, counts", map[string]any{"eks": eks}, "2026-07-01", "1.30", true},
		{"the oldest minor of any provider wins", map[string]any{"eks": eks, "gke": gke}, "2026-02-01", "1.29", true},
		{"a minor without extended support ends with standard support", map[string]any{"eks": eks, "gke": gke}, "2026-03-02", "1.30", true},
		{"a minor has ended on its end day, as the lifecycle rule has it", map[string]any{"eks": eks}, "2026-07-23", "1.31", true},
		{"1.9 is older than 1.30, as a minor and not as text", map[string]any{"eks": eks, "old": old}, "2026-07-01", "1.9", true},
		{"past every end, none", map[string]any{"eks": eks, "gke": gke}, "2026-11-26", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := builtinTree(t)
			tree["providers"] = tt.calendars
			k, err := kb.Decode("kb.tar.gz", tree)
			if err != nil {
				t.Fatal(err)
			}
			now, _ := time.Parse(time.DateOnly, tt.day)
			if got, ok := k.OldestSupported(now.Add(12 * time.Hour)); got != tt.want || ok != tt.ok {
				t.Errorf("OldestSupported(%s) = %q, %v; want %q, %v", tt.day, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestOldestSupportedFollowsEachProvidersCalendar(t *testing.T) {
	tests := []struct{ day, want string }{
		// AKS keeps 1.31 in extended support until 2026-11-30, the longest of the three
		{"2026-11-29", "1.31"},
		{"2026-12-02", "1.32"},
	}
	for _, tt := range tests {
		now, _ := time.Parse(time.DateOnly, tt.day)
		if got, ok := builtin(t).OldestSupported(now); got != tt.want || !ok {
			t.Errorf("built-in kb on %s: OldestSupported = %q, %v; want %q", tt.day, got, ok, tt.want)
		}
	}
}

func TestAKnowledgeBaseWithoutCalendarsHasNoOldestSupported(t *testing.T) {
	tree := builtinTree(t)
	delete(tree, "providers")
	k, err := kb.Decode("kb.tar.gz", tree)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := k.OldestSupported(time.Now()); ok {
		t.Errorf("OldestSupported = %q, want none", got)
	}
	tree["providers"] = []any{"eks"}
	if _, err := kb.Decode("kb.tar.gz", tree); err == nil || !strings.Contains(err.Error(), "/upgradescope/kb/providers is not a set of support calendars") {
		t.Errorf("Decode of a calendar list = %v, want it refused with its pointer", err)
	}
}

// The oldest minor still supported is the oldest whose phase the lifecycle rule does not call
// "ended", on every day a built-in calendar changes (the day before an end, of it, after it).
func TestOldestSupportedIsWhatTheLifecycleRuleCallsNotEnded(t *testing.T) {
	pq, err := rego.New(
		rego.Query(`ended := {[p, m] | some p, m; r := data.upgradescope.kb.providers[p].versions[m]; data.upgradescope.rules.lifecycle.phase_of(r) == "ended"}
minors := [m | some p, m; data.upgradescope.kb.providers[p].versions[m]; not [p, m] in ended]`),
		rego.LoadBundle("../policies/rules"),
		rego.LoadBundle("../policies/kb"),
		rego.WithFilter(func(_ string, info fs.FileInfo, _ int) bool { return strings.HasSuffix(info.Name(), "_test.rego") }),
	).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("prepare the lifecycle rule: %v", err)
	}
	rs, err := rego.New(rego.Query(`ends := {d | some p, m, k; d := data.upgradescope.kb.providers[p].versions[m][k]; k in {"standardEnd", "extendedEnd"}}`),
		rego.LoadBundle("../policies/kb")).Eval(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("read the calendars: %v", err)
	}
	ends := rs[0].Bindings["ends"].([]any)
	if len(ends) < 10 {
		t.Fatalf("the built-in calendars hold %d end dates", len(ends))
	}
	k := builtin(t)
	for _, e := range ends {
		end, err := time.Parse(time.DateOnly, e.(string))
		if err != nil {
			t.Fatalf("end date %v: %v", e, err)
		}
		for _, day := range []time.Time{end.AddDate(0, 0, -1), end, end.AddDate(0, 0, 1)} {
			now := day.Add(12 * time.Hour)
			rs, err := pq.Eval(context.Background(), rego.EvalInput(map[string]any{"now": now.Format(time.RFC3339)}))
			if err != nil || len(rs) != 1 {
				t.Fatalf("evaluate on %s: %v", day.Format(time.DateOnly), err)
			}
			want, ok := oldest(t, rs[0].Bindings["minors"].([]any))
			if got, gotOK := k.OldestSupported(now); got != want || gotOK != ok {
				t.Errorf("on %s OldestSupported = %q, %v; the lifecycle rule leaves %q, %v", day.Format(time.DateOnly), got, gotOK, want, ok)
			}
		}
	}
}

// oldest is the lowest of minors, compared as versions.
func oldest(t *testing.T, minors []any) (string, bool) {
	t.Helper()
	var low inventory.Version
	found := false
	for _, m := range minors {
		v, err := inventory.ParseVersion(m.(string))
		if err != nil {
			t.Fatalf("minor %v: %v", m, err)
		}
		if !found || low.LaterMinor(v) {
			low, found = v, true
		}
	}
	if !found {
		return "", false
	}
	return low.MinorString(), true
}
