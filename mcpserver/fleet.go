package mcpserver

import (
	"context"
	"errors"
)

// clusterReport is a fleet cluster's latest stored report, read with the read token.
func (s *Server) clusterReport(ctx context.Context, name string) (*scanned, error) {
	if s.cfg.Fleet == nil {
		return nil, errors.New("no fleet server: start upgradescope mcp with --server URL and --read-token-file")
	}
	return nil, errors.New("fleet reports: not yet")
}
