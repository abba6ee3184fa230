package server

import (
	"time"

	"github.com/upgradescope/upgradescope/engine"
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

// UntilNextDay is how long RunReevaluation waits for the next UTC day's pass.
var UntilNextDay = untilNextDay
