package server

import "github.com/upgradescope/upgradescope/engine"

// SetReevaluateHook makes fn run between each re-evaluation and its store, so a test can
// push meanwhile.
func SetReevaluateHook(s *Server, fn func()) { s.reevalHook = fn }

// BundlesKey is the key the server stores beside an evaluation made with eng.
func BundlesKey(eng *engine.Engine) string { return newPolicy(eng).key }
