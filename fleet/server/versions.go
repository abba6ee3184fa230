package server

import (
	"sync"

	"github.com/upgradescope/upgradescope/inventory"
)

// parsedVersions memoises inventory.ParseVersion, a regular expression the fleet read would
// otherwise run several times for every cluster. A server sees few distinct versions; past
// maxParsedVersions (a pusher inventing versions) it stops remembering new ones.
var parsedVersions = struct {
	sync.Mutex
	m map[string]parsedVersion
}{m: map[string]parsedVersion{}}

const maxParsedVersions = 10_000

type parsedVersion struct {
	v   inventory.Version
	err error
}

func parseVersion(s string) (inventory.Version, error) {
	parsedVersions.Lock()
	p, ok := parsedVersions.m[s]
	parsedVersions.Unlock()
	if ok {
		return p.v, p.err
	}
	v, err := inventory.ParseVersion(s)
	parsedVersions.Lock()
	if len(parsedVersions.m) < maxParsedVersions {
		parsedVersions.m[s] = parsedVersion{v, err}
	}
	parsedVersions.Unlock()
	return v, err
}
