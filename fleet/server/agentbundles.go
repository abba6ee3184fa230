package server

import (
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
