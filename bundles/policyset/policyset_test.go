package policyset

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

// A bundle server answers 200, then 304s, then a new kb revision; the set compiles it off
// the evaluating goroutines and swaps it in while they keep evaluating. Run with -race
// (make race).
func TestASetSwapsANewKBRevisionWhileEvaluationsRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	served := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, served, bundletest.KB(t, private, "2027-01-05.1", "1.35"))
	srv := httptest.NewServer(bundles.Handler(dir, bundles.ServeOptions{}))
	defer srv.Close()

	set := newSet(t, Base{})
	mon := &recorder{}
	set.Attach(mon)
	var results sync.Map
	poller, err := bundles.Poll(ctx, bundles.PollOptions{URLs: []string{srv.URL + "/kb.tar.gz"},
		Verification: bundles.VerificationConfig(string(pub), "RS256"), MinDelay: time.Second, MaxDelay: time.Second,
		Activate: set.Activate, Observed: func(src, result string, err error) {
			set.Observed(src, result, err)
			results.Store(result, true)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer poller.Stop(ctx)
	if _, revs := set.Engine(); kbRevision(revs) != "2027-01-05.1" {
		t.Fatalf("after the cold start kb = %s, want the served 2027-01-05.1", kbRevision(revs))
	}

	// Evaluators run until told to stop; each report must be consistent with one engine.
	inv := &inventory.Document{SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	seen := sync.Map{}
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				e, _ := set.Engine()
				r, err := e.Evaluate(ctx, inv, []string{"1.36"}, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
				if err != nil {
					errs <- err
					return
				}
				if pastHorizon := slices.ContainsFunc(r.Targets[0].NotAssessed, func(g report.Gap) bool { return g.Capability == "kb-coverage" }); pastHorizon != (r.KB.Horizon == "1.35") {
					errs <- &mismatch{r.KB.Horizon}
					return
				}
				seen.Store(r.Bundles[1].Revision, true)
			}
		}()
	}
	waitUntil(t, func() bool { _, ok := results.Load(bundles.ResultNotModified); return ok })
	bundletest.Publish(t, served, bundletest.KB(t, private, "2027-01-12.1", "1.37"))
	waitUntil(t, func() bool { _, ok := seen.Load("2027-01-12.1"); return ok })
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("an evaluation during the swap failed: %v", err)
	}
	if _, ok := seen.Load("2027-01-05.1"); !ok {
		t.Error("no evaluation ran on the first revision")
	}
	if got := mon.lastKB(); got != "2027-01-12.1" {
		t.Errorf("the monitor was last told kb %q, want 2027-01-12.1", got)
	}
	_, revs := set.Engine()
	if revs[1].ActivatedAt.IsZero() || revs[0].ActivatedAt.IsZero() || set.Update() == nil || set.Update().Err != "" {
		t.Errorf("active = %+v, update = %+v: want activation times and a clean update", revs, set.Update())
	}
}

// recorder is a Monitor that keeps what it was told.
type recorder struct {
	mu     sync.Mutex
	active [][]Revision
}

func (r *recorder) Active(revs []Revision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active = append(r.active, revs)
}

func (r *recorder) Observed(string, string, bool) {}

func (r *recorder) lastKB() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return kbRevision(r.active[len(r.active)-1])
}

type mismatch struct{ horizon string }

func (m *mismatch) Error() string {
	return "a report mixed two kb revisions (horizon " + m.horizon + ")"
}

func kbRevision(revs []Revision) string {
	for _, r := range revs {
		if r.Name == "kb" {
			return r.Revision
		}
	}
	return ""
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newSet(t *testing.T, base Base) *Set {
	t.Helper()
	s, err := New(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kb is the shipped kb as revision, unsigned, as fetched from src.
func kb(t testing.TB, src, revision string) *bundles.Fetched {
	t.Helper()
	b, err := bundles.Read(bytes.NewReader(bundletest.KB(t, "", revision, "1.37")), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &bundles.Fetched{Source: src, Bundle: &b}
}

// A failed activation keeps the engine and its activation times, the update says why, and
// OnSwap hears only of the engines that became current.
func TestASetKeepsTheLastGoodEngineWhenActivationFails(t *testing.T) {
	ctx := context.Background()
	set := newSet(t, Base{})
	var swapped []*engine.Engine
	set.OnSwap(func(e *engine.Engine) { swapped = append(swapped, e) })
	before, revs := set.Engine()
	// A kb that needs a newer engine than this one, as a bundle built for a later release does.
	f := kb(t, "https://b.example/kb.tar.gz", "2027-01-05.1")
	f.Bundle.Manifest.Metadata["minEngineVersion"] = "999.0.0"
	err := set.Activate(ctx, f)
	set.Observed(f.Source, bundles.ResultActivationFailed, err)
	after, revsAfter := set.Engine()
	if err == nil || after != before || !revsAfter[1].ActivatedAt.Equal(revs[1].ActivatedAt) || len(swapped) != 0 {
		t.Errorf("err %v; engine swapped %v, OnSwap told %d times: want the last good engine kept", err, after != before, len(swapped))
	}
	if u := set.Update(); u == nil || !strings.Contains(u.Err, "2027-01-05.1") {
		t.Errorf("update = %+v, want the refused revision named", u)
	}

	good := kb(t, "https://b.example/kb.tar.gz", "2027-01-12.1")
	if err := set.Activate(ctx, good); err != nil {
		t.Fatal(err)
	}
	if current, _ := set.Engine(); len(swapped) != 1 || swapped[0] != current {
		t.Errorf("OnSwap told of %d engines, want the one now current", len(swapped))
	}
}

// A pack whose findings break the contract only on real data passes the load-time probe
// (an empty inventory); judging the last inventory remembered refuses it before the swap.
func TestASetRefusesAPackThatBreaksTheContractOnTheLastInventory(t *testing.T) {
	ctx := context.Background()
	f := &bundles.Fetched{Source: "https://b.example/broken.tar.gz", Bundle: brokenPack(t)}
	if err := newSet(t, Base{}).Activate(ctx, f); err != nil {
		t.Fatalf("with no inventory yet the pack loads (its findings need data): %v", err)
	}

	set := newSet(t, Base{})
	eng, _ := set.Engine()
	set.Remember(&inventory.Document{SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}},
		APIUsage:     []inventory.APIUsage{{Version: "v1", Kind: "Endpoints", Count: 1}}}, []string{"1.36"})
	err := set.Activate(ctx, f)
	if current, _ := set.Engine(); err == nil || !strings.Contains(err.Error(), "breaks the findings contract") || current != eng {
		t.Errorf("err = %v; want the pack refused for its findings and the embedded engine kept", err)
	}
}

// brokenPack is a custom pack whose findings carry a severity the contract does not know,
// once the inventory records any API usage.
func brokenPack(t *testing.T) *bundle.Bundle {
	t.Helper()
	src := "package upgradescope.custom.broken\n\nfindings contains {\"key\": \"broken/x\", \"category\": \"broken\", \"severity\": \"fatal\", \"target\": t, \"title\": \"x\"} if {\n\tsome t in input.targets\n\tcount(input.inventory.apiUsage) > 0\n}\n"
	return pack(t, "broken", src)
}

func pack(t *testing.T, name, src string) *bundle.Bundle {
	t.Helper()
	path := "/" + name + ".rego"
	m, err := ast.ParseModuleWithOpts(path, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"upgradescope/custom/" + name}
	return &bundle.Bundle{Manifest: bundle.Manifest{Revision: "1", Roots: &roots}, Data: map[string]any{},
		Modules: []bundle.ModuleFile{{Path: path, URL: path, Raw: []byte(src), Parsed: m}}}
}

// WithCandidate builds the active set with the candidate in it, replacing the bundle of its
// roots wherever that came from, or beside them; the active engine stays.
func TestWithCandidateReplacesTheBundleOfItsRootsOrAddsIt(t *testing.T) {
	ctx := context.Background()
	quiet := &bundles.Fetched{Source: "quiet.tar.gz", Bundle: pack(t, "quiet", "package upgradescope.custom.quiet\n\nfindings contains f if {\n\tf := {}\n\tfalse\n}\n")}
	tests := []struct {
		name      string
		base      Base
		polled    *bundles.Fetched
		candidate *bundles.Fetched
		want      []string // name@revision@source of every bundle, in the engine's order
	}{
		{name: "a candidate kb replaces the built-in kb",
			candidate: kb(t, "candidate.tar.gz", "2027-02-01.1"),
			want:      []string{"rules@" + policies.RulesRevision + "@embedded", "kb@2027-02-01.1@candidate.tar.gz"}},
		{name: "a candidate kb replaces the kb given at start",
			base:      Base{Bundles: []*bundles.Fetched{kb(t, "start.tar.gz", "2027-01-05.1")}},
			candidate: kb(t, "candidate.tar.gz", "2027-02-01.1"),
			want:      []string{"rules@" + policies.RulesRevision + "@embedded", "kb@2027-02-01.1@candidate.tar.gz"}},
		{name: "a candidate kb replaces a polled kb",
			polled:    kb(t, "https://b.example/kb.tar.gz", "2027-01-12.1"),
			candidate: kb(t, "candidate.tar.gz", "2027-02-01.1"),
			want:      []string{"rules@" + policies.RulesRevision + "@embedded", "kb@2027-02-01.1@candidate.tar.gz"}},
		{name: "a pack of new roots is added as a custom pack beside a polled kb",
			polled:    kb(t, "https://b.example/kb.tar.gz", "2027-01-12.1"),
			candidate: quiet,
			want: []string{"rules@" + policies.RulesRevision + "@embedded", "kb@2027-01-12.1@https://b.example/kb.tar.gz",
				"quiet.tar.gz@1@quiet.tar.gz"}}, // a pack without a name in its manifest is named by its source
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newSet(t, tt.base)
			if tt.polled != nil {
				if err := set.Activate(ctx, tt.polled); err != nil {
					t.Fatal(err)
				}
			}
			active, activeRevs := set.Engine()
			eng, err := set.WithCandidate(ctx, tt.candidate)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range eng.Bundles() {
				got = append(got, b.Name+"@"+b.Revision+"@"+b.Source)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("bundles = %v, want %v", got, tt.want)
			}
			if now, revs := set.Engine(); now != active || !slices.Equal(revs, activeRevs) {
				t.Error("WithCandidate changed the active set")
			}
		})
	}
}

// A polled bundle replaces the bundle given at start with its roots; one with the roots
// another polled source holds is refused naming both, whatever the order they come in.
func TestAPolledBundleReplacesTheStartBundleOfItsRootsButNotAnotherSources(t *testing.T) {
	ctx := context.Background()
	set := newSet(t, Base{Bundles: []*bundles.Fetched{kb(t, "start.tar.gz", "2027-01-05.1")}})
	if err := set.Activate(ctx, kb(t, "/srv/kb.tar.gz", "2027-01-12.1")); err != nil {
		t.Fatal(err)
	}
	err := set.Activate(ctx, kb(t, "/srv/kb-copy.tar.gz", "2027-02-01.1"))
	if err == nil || !strings.Contains(err.Error(), "/srv/kb.tar.gz already serves a bundle with its roots") {
		t.Errorf("a second source of kb: %v, want it refused naming the first", err)
	}
	if err := set.Activate(ctx, kb(t, "/srv/kb.tar.gz", "2027-02-02.1")); err != nil {
		t.Fatalf("a new revision from the same source: %v", err)
	}
	eng, _ := set.Engine()
	var got []string
	for _, b := range eng.Bundles() {
		got = append(got, b.Name+"@"+b.Revision+"@"+b.Source)
	}
	want := []string{"rules@" + policies.RulesRevision + "@embedded", "kb@2027-02-02.1@/srv/kb.tar.gz"}
	if !slices.Equal(got, want) {
		t.Errorf("bundles = %v, want %v", got, want)
	}
}
