package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Addon is one entry of the add-on registry as the kb bundle holds it: what the dashboard's
// Knowledge page shows, read from the bundle's data, never from Rego.
type Addon struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Support        AddonSupport   `json:"support"`
	Lines          []AddonLine    `json:"lines,omitempty"`
	Compat         []AddonCompat  `json:"compat,omitempty"`
	Supersedes     []string       `json:"supersedes,omitempty"`
	Recommendation string         `json:"recommendation,omitempty"`
	Match          map[string]any `json:"match,omitempty"`
}

// AddonSupport is an add-on's support status and its end of life ("unknown" when no
// source gives one).
type AddonSupport struct {
	Status            string   `json:"status"`
	EOL               string   `json:"eol,omitempty"`
	ExtendedEOL       string   `json:"extendedEol,omitempty"`
	ExtendedCondition string   `json:"extendedCondition,omitempty"`
	Citations         []string `json:"citations,omitempty"`
}

// AddonLine is one release line of an add-on.
type AddonLine struct {
	Line       string     `json:"line"`
	EOL        string     `json:"eol,omitempty"`
	Kubernetes *KubeRange `json:"kubernetes,omitempty"`
	Citations  []string   `json:"citations,omitempty"`
}

// AddonCompat is a version interval of an add-on and the Kubernetes minors it supports.
type AddonCompat struct {
	Versions   map[string]string `json:"versions,omitempty"`
	Kubernetes *KubeRange        `json:"kubernetes,omitempty"`
	Citations  []string          `json:"citations,omitempty"`
}

// KubeRange is the Kubernetes minors a line or interval supports, both ends inclusive.
type KubeRange struct {
	Min string `json:"min,omitempty"`
	Max string `json:"max,omitempty"`
}

// Addons is the add-on registry of the kb bundle, by id. The slice is the engine's: callers
// must not change it.
func (e *Engine) Addons() []Addon { return e.addons }

// APIs is the API lifecycle table, sorted by group/version/Kind key. The slice is the
// engine's: callers must not change it.
func (e *Engine) APIs() []APIEntry { return e.apiList }

// Key is the entry's group/version/Kind ("core" for the core group), as the kb keys it.
func (a APIEntry) Key() string {
	group := a.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + a.Version + "/" + a.Kind
}

// readKnowledge keeps the registry and the lifecycle table as lists a page can walk in
// order. A registry that does not decode is an error: an empty list would tell a reader
// the kb knows no add-ons, when the bundle is broken.
func (e *Engine) readKnowledge(kb map[string]any) error {
	var addons map[string]Addon
	if err := remarshal(kb["addons"], &addons); err != nil {
		return fmt.Errorf("/upgradescope/kb/addons is not an add-on registry by id: %w", err)
	}
	for id, a := range addons {
		if a.ID == "" {
			a.ID = id
		}
		e.addons = append(e.addons, a)
	}
	slices.SortFunc(e.addons, func(a, b Addon) int { return strings.Compare(a.ID, b.ID) })
	for _, a := range e.apis {
		e.apiList = append(e.apiList, a)
	}
	slices.SortFunc(e.apiList, func(a, b APIEntry) int { return strings.Compare(a.Key(), b.Key()) })
	return nil
}
