package server

import (
	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// storedBundles is what a push's envelope named, as the store keeps it.
func storedBundles(in []push.Bundle) []store.Bundle {
	var out []store.Bundle
	for _, b := range in {
		out = append(out, store.Bundle{Name: b.Name, Revision: b.Revision})
	}
	return out
}

// agentBundles shows a cluster's bundles beside the server's own.
func (s *Server) agentBundles(c store.Cluster) []api.AgentBundle {
	out := []api.AgentBundle{}
	for _, b := range c.AgentBundles {
		out = append(out, api.AgentBundle{Name: b.Name, Revision: b.Revision, Behind: s.behind(b)})
	}
	return out
}

// behind answers whether the server evaluates with another revision of b's bundle.
func (s *Server) behind(b store.Bundle) bool {
	for _, own := range s.policy().bundles {
		if own.Name == b.Name {
			return own.Revision != b.Revision
		}
	}
	return false
}
