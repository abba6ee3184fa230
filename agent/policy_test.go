package agent

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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/bundletest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

// A bundle server answers 200, then 304s, then a new kb revision; the policy compiles it off
// the evaluating goroutines and swaps it in while they keep evaluating. Run with -race
// (make race).
func TestPolicySwapsANewKBRevisionWhileEvaluationsRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	served := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, served, bundletest.KB(t, private, "2027-01-05.1", "1.35"))
	srv := httptest.NewServer(bundles.Handler(dir, bundles.ServeOptions{}))
	defer srv.Close()

	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	policy := NewPolicy(eng, func(ctx context.Context, polled []engine.Option) (*engine.Engine, error) {
		return engine.New(ctx, polled...)
	}, nil)
	health := newHealth(time.Minute)
	policy.attach(health.metrics.bundles)
	var results sync.Map
	poller, err := bundles.Poll(ctx, bundles.PollOptions{URLs: []string{srv.URL + "/kb.tar.gz"},
		Verification: bundles.VerificationConfig(string(pub), "RS256"), MinDelay: time.Second, MaxDelay: time.Second,
		Activate: policy.Activate, Observed: func(src, result string, err error) {
			policy.Observed(src, result, err)
			results.Store(result, true)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer poller.Stop(ctx)
	if _, revs := policy.Engine(); kbRevision(revs) != "2027-01-05.1" {
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
				e, _ := policy.Engine()
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
	rec := httptest.NewRecorder()
	health.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`upgradescope_bundle_info{name="kb",revision="2027-01-12.1",source="` + srv.URL + `/kb.tar.gz"} 1`,
		`upgradescope_bundle_polls_total{result="activated",source="` + srv.URL + `/kb.tar.gz"} 2`,
		`upgradescope_bundle_update_failing 0`,
		`upgradescope_bundle_activated_timestamp_seconds{name="kb"}`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, rec.Body.String())
		}
	}
	_, revs := policy.Engine()
	if revs[1].ActivatedAt == nil || revs[0].ActivatedAt == nil || policy.Update() == nil || policy.Update().Err != "" {
		t.Errorf("active = %+v, update = %+v: want activation times and a clean update", revs, policy.Update())
	}
}

type mismatch struct{ horizon string }

func (m *mismatch) Error() string {
	return "a report mixed two kb revisions (horizon " + m.horizon + ")"
}

func kbRevision(revs []crd.BundleRevision) string {
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

// embeddedPolicy starts from the embedded bundles; later sets are built with extra options.
func embeddedPolicy(t *testing.T, extra ...engine.Option) *Policy {
	t.Helper()
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return NewPolicy(eng, func(ctx context.Context, polled []engine.Option) (*engine.Engine, error) {
		return engine.New(ctx, append(polled, extra...)...)
	}, nil)
}

// A failed activation keeps the engine and its activation times, and the status says why.
func TestPolicyKeepsTheLastGoodEngineWhenActivationFails(t *testing.T) {
	ctx := context.Background()
	// This build refuses every set, as an engine too old for a bundle would.
	policy := embeddedPolicy(t, engine.WithEngineVersion("0.0.1"))
	before, revs := policy.Engine()
	b, err := bundles.Read(bytes.NewReader(bundletest.KB(t, "", "2027-01-05.1", "1.37")), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &bundles.Fetched{Source: "https://b.example/kb.tar.gz", Bundle: &b}
	err = policy.Activate(ctx, f)
	policy.Observed(f.Source, bundles.ResultActivationFailed, err)
	after, revsAfter := policy.Engine()
	if err == nil || after != before || revsAfter[1].ActivatedAt != revs[1].ActivatedAt {
		t.Errorf("err %v; engine swapped %v: want the last good engine kept", err, after != before)
	}
	st := crd.BuildStatus(crd.Status{}, crd.Evaluation{Now: time.Now(), Bundles: revsAfter, BundleUpdate: policy.Update()})
	c := apimeta.FindStatusCondition(st.Conditions, crd.ConditionBundlesCurrent)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "2027-01-05.1") || !strings.Contains(c.Message, "still evaluating with rules "+policies.RulesRevision+", kb "+policies.KBRevision) {
		t.Errorf("BundlesCurrent = %+v, want False naming the refused revision and the ones kept", c)
	}
}

// A pack whose findings break the contract only on this cluster's data passes the load-time
// probe (an empty inventory); judging the last tick's inventory refuses it before the swap.
func TestPolicyRefusesAPackThatBreaksTheContractOnTheLastInventory(t *testing.T) {
	ctx := context.Background()
	policy := embeddedPolicy(t)
	eng, _ := policy.Engine()
	src := "package upgradescope.custom.broken\n\nfindings contains {\"key\": \"broken/x\", \"category\": \"broken\", \"severity\": \"fatal\", \"target\": t, \"title\": \"x\"} if {\n\tsome t in input.targets\n\tcount(input.inventory.apiUsage) > 0\n}\n"
	m, err := ast.ParseModuleWithOpts("/broken.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"upgradescope/custom/broken"}
	pack := &bundle.Bundle{Manifest: bundle.Manifest{Revision: "1", Roots: &roots}, Data: map[string]any{},
		Modules: []bundle.ModuleFile{{Path: "/broken.rego", URL: "/broken.rego", Raw: []byte(src), Parsed: m}}}
	f := &bundles.Fetched{Source: "https://b.example/broken.tar.gz", Bundle: pack}
	if err := policy.Activate(ctx, f); err != nil {
		t.Fatalf("with no tick yet the pack loads (its findings need data): %v", err)
	}

	policy = NewPolicy(eng, policy.build, nil)
	policy.Remember(&inventory.Document{SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}},
		APIUsage:     []inventory.APIUsage{{Version: "v1", Kind: "Endpoints", Count: 1}}}, []string{"1.36"})
	err = policy.Activate(ctx, f)
	if current, _ := policy.Engine(); err == nil || !strings.Contains(err.Error(), "breaks the findings contract") || current != eng {
		t.Errorf("err = %v; want the pack refused for its findings and the embedded engine kept", err)
	}
}
