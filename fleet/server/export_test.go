package server

import (
	"context"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// SetReevaluateHook makes fn run between each re-evaluation and its store, so a test can
// push meanwhile.
func SetReevaluateHook(s *Server, fn func()) {
	s.reeval.hook = func() error { fn(); return nil }
}

// SetReevaluateFault makes fn run where SetReevaluateHook's does, its error failing that
// cluster's re-evaluation: a transient fault (a connection dropped between the evaluation
// and its store) that the real store cannot be made to produce on cue.
func SetReevaluateFault(s *Server, fn func() error) { s.reeval.hook = fn }

// SetReevaluationRetry shortens the first delay before a pass that left work runs again.
func SetReevaluationRetry(s *Server, d time.Duration) { s.reeval.retry = d }

// BundlesKey is the key the server stores beside an evaluation made with eng.
func BundlesKey(eng *engine.Engine) string { return newPolicy(eng).key }

// UntilNextDay is how long runReevaluation waits for the next UTC day's pass.
var UntilNextDay = untilNextDay

// The background loops and the engine swap, which Process.Run drives in production; tests
// run them alone.
func (s *Server) RunReevaluation(ctx context.Context)                  { s.runReevaluation(ctx) }
func (s *Server) RunNotifications(ctx context.Context)                 { s.runNotifications(ctx) }
func (s *Server) RunRetention(ctx context.Context, keep time.Duration) { s.runRetention(ctx, keep) }
func (s *Server) Swap(eng *engine.Engine)                              { s.swap(eng) }

// UnownedTwoWays answers each judged cluster's blockers and warnings no team owns at target,
// as the fleet's stored cells tell them and as its reports' summaries do: unownedOn reads
// either, so the two must agree.
func UnownedTwoWays(ctx context.Context, s *Server, target string) (cells, sums map[string][2]int, err error) {
	fr := s.reeval.reads
	v, err := fr.loadFleet(ctx, fleetScope)
	if err != nil {
		return nil, nil, err
	}
	cells, sums = map[string][2]int{}, map[string][2]int{}
	judged, _ := judgedAt(v, target)
	for _, j := range judged {
		u, _ := unownedOn(v, j, fleetScope)
		cells[j.cluster.Name] = [2]int{u.Blockers, u.Warnings}
	}
	if err := fr.withSummaries(ctx, &v); err != nil {
		return nil, nil, err
	}
	for _, j := range judged {
		u, _ := unownedOn(v, j, fleetScope)
		sums[j.cluster.Name] = [2]int{u.Blockers, u.Warnings}
	}
	return cells, sums, nil
}

// SetAuditRefresh sets how long after a batch naming something new the cluster is judged
// again, and how often at most.
func SetAuditRefresh(s *Server, delay, every time.Duration) {
	s.refresh.mu.Lock()
	defer s.refresh.mu.Unlock()
	s.refresh.delay, s.refresh.every = delay, every
}

// DecodeAuditSection reads a stored audit state back as the section it judges, failing t
// when it cannot.
func DecodeAuditSection(t testing.TB, stored []byte) *inventory.AuditCalls {
	t.Helper()
	s, err := decodeAuditState(stored)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return nil
	}
	return audit.ResumeState(s, time.Time{}).Section()
}
