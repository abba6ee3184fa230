package server

// SetReevaluateHook makes fn run between each re-evaluation and its store, so a test can
// push meanwhile.
func SetReevaluateHook(s *Server, fn func()) { s.reevalHook = fn }
