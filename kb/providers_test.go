package kb_test

import (
	"strings"
	"testing"
	"time"

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
