package server

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// policy is an engine and its bundle set as the store records them. A request reads the
// server's once (activePolicy.load), so an evaluation and the bundles stored beside it
// always match, and one in flight during a Swap finishes on the engine it started with.
type policy struct {
	eng     *engine.Engine
	bundles []store.Bundle
	// key is the bundles' canonical join; a stored evaluation with another key is outdated.
	key string
}

func newPolicy(eng *engine.Engine) *policy {
	p := &policy{eng: eng}
	var parts []string
	for _, b := range eng.Bundles() {
		p.bundles = append(p.bundles, store.Bundle{Name: b.Name, Revision: b.Revision})
		parts = append(parts, b.Name+"@"+b.Revision)
	}
	slices.Sort(parts)
	p.key = strings.Join(parts, ",")
	return p
}

// activePolicy holds the policy the server evaluates with now; Server.Swap replaces it
// whole. Every feature that evaluates or says what is outdated shares one. Safe for
// concurrent use.
type activePolicy struct{ p atomic.Pointer[policy] }

func newActivePolicy(eng *engine.Engine) *activePolicy {
	a := &activePolicy{}
	a.set(eng)
	return a
}

// load is the policy to evaluate with now.
func (a *activePolicy) load() *policy { return a.p.Load() }

func (a *activePolicy) set(eng *engine.Engine) { a.p.Store(newPolicy(eng)) }
