package server

import (
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// agentBundle is a bundle a cluster's agent evaluates with, as the API shows it. Behind is
// set when the server evaluates with another revision of a bundle of that name: the agent
// has not picked up what the server has (or runs one the server has not been given yet).
type agentBundle struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
	Behind   bool   `json:"behind"`
}

// storedBundles is what a push's envelope named, as the store keeps it.
func storedBundles(in []push.Bundle) []store.Bundle {
	var out []store.Bundle
	for _, b := range in {
		out = append(out, store.Bundle{Name: b.Name, Revision: b.Revision})
	}
	return out
}
