// Package kb holds the knowledge base's tables as the kb bundle declares them at
// data.upgradescope.kb: the API lifecycle table, the add-on registry, the API groups
// Kubernetes serves, the index of images and charts the add-on matchers claim, the probes
// and the horizon. It decodes the data tree a bundle loader produced (JSON values as
// map[string]any) and links no policy engine, so the dashboard, the chart's RBAC generator
// and the collectors read the tables without the evaluator; the engine loads the bundle and
// hands the decoded KB out.
package kb

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
	"github.com/upgradescope/upgradescope/report"
)

// KB is the decoded knowledge base. It is read only once decoded and safe for concurrent
// use; the slices and maps its methods return are its own, and callers must not change them.
type KB struct {
	meta report.KBMeta
	// apis is the lifecycle table by key ("core/v1/Endpoints"), apiList the same in key order.
	apis    map[string]APIEntry
	apiList []APIEntry
	addons  []Addon
	groups  map[string]bool
	// images are the path segments and name labels an add-on matcher starts with or lists
	// (kb.addonindex.firstSegments and labels).
	images inventory.ImageWatch
	// charts are the Helm charts the add-on registry matches (kb.addonindex.charts).
	charts map[string]bool
	probes []probe.Declared
	// providers are the managed providers' support calendars by id (kb.providers).
	providers map[string]calendar
	// approachingDays is kb.skew.approachingDays: how far ahead an end of life warns (0, as
	// the rule reads a missing one, never).
	approachingDays int
}

// FromData decodes the knowledge base in a bundle's data (a bundle reader's Data), found at
// upgradescope.kb; origin names the bundle in errors.
func FromData(origin string, data map[string]any) (*KB, error) {
	top, _ := data["upgradescope"].(map[string]any)
	tree, ok := top["kb"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("kb bundle (%s) has no upgradescope/kb data", origin)
	}
	return Decode(origin, tree)
}

// Decode reads the kb bundle's data at upgradescope.kb (tree), as a bundle loader decoded
// it; origin (a path or URL) names the bundle in errors. A table that does not decode is an
// error: an empty one would tell a reader the knowledge base knows nothing, when the bundle
// is broken.
func Decode(origin string, tree map[string]any) (*KB, error) {
	k := &KB{}
	if err := remarshal(tree["groups"], &k.groups); err != nil {
		return nil, fmt.Errorf("kb bundle (%s): /upgradescope/kb/groups is not a set of API groups: %w", origin, err)
	}
	if err := remarshal(tree["meta"], &k.meta); err != nil || k.meta.Horizon == "" {
		return nil, fmt.Errorf("kb bundle (%s): /upgradescope/kb/meta has no horizon", origin)
	}
	if err := remarshal(tree["apis"], &k.apis); err != nil || len(k.apis) == 0 {
		return nil, fmt.Errorf("kb bundle (%s): /upgradescope/kb/apis holds no API lifecycle data", origin)
	}
	k.apiList = slices.SortedFunc(maps.Values(k.apis), func(a, b APIEntry) int { return strings.Compare(a.Key(), b.Key()) })
	if err := k.readAddons(tree["addons"]); err != nil {
		return nil, fmt.Errorf("kb bundle (%s): %w", origin, err)
	}
	var skew struct {
		ApproachingDays int `json:"approachingDays"`
	}
	if err := remarshal(tree["skew"], &skew); err != nil {
		return nil, fmt.Errorf("kb bundle (%s): /upgradescope/kb/skew is not the skew policy: %w", origin, err)
	}
	k.approachingDays = skew.ApproachingDays
	if err := k.readIndex(tree["addonindex"]); err != nil {
		return nil, fmt.Errorf("kb bundle (%s): %w", origin, err)
	}
	if err := k.readProviders(tree["providers"]); err != nil {
		return nil, fmt.Errorf("kb bundle (%s): %w", origin, err)
	}
	specs, err := DecodeProbes(tree["probes"], origin, "/upgradescope/kb/probes")
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		k.probes = append(k.probes, probe.Declared{ID: "kb/" + s.ID, Spec: s})
	}
	return k, nil
}

// readAddons keeps the registry as a list a page can walk in id order.
func (k *KB) readAddons(v any) error {
	var addons map[string]Addon
	if err := remarshal(v, &addons); err != nil {
		return fmt.Errorf("/upgradescope/kb/addons is not an add-on registry by id: %w", err)
	}
	for id, a := range addons {
		if a.ID == "" {
			a.ID = id
		}
		k.addons = append(k.addons, a)
	}
	slices.SortFunc(k.addons, func(a, b Addon) int { return strings.Compare(a.ID, b.ID) })
	return nil
}

// readIndex reads the add-on index: which images and charts a matcher could claim. An
// index that does not decode is refused: read as empty, it would hide every add-on image
// from the collectors, and an end-of-life add-on would go unreported.
func (k *KB) readIndex(v any) error {
	var index struct {
		FirstSegments map[string]bool     `json:"firstSegments"`
		Labels        map[string][]string `json:"labels"`
		Charts        map[string][]string `json:"charts"`
	}
	if err := remarshal(v, &index); err != nil {
		return fmt.Errorf("/upgradescope/kb/addonindex is not an add-on index: %w", err)
	}
	k.images = inventory.ImageWatch{Segments: map[string]bool{}, Names: map[string]bool{}}
	maps.Copy(k.images.Segments, index.FirstSegments)
	for name := range index.Labels {
		k.images.Names[name] = true
	}
	k.charts = map[string]bool{}
	for chart := range index.Charts {
		k.charts[chart] = true
	}
	return nil
}

// Meta describes the knowledge base: its horizon is the newest minor it can judge.
func (k *KB) Meta() report.KBMeta { return k.meta }

// Addons is the add-on registry, by id.
func (k *KB) Addons() []Addon { return k.addons }

// APIs is the API lifecycle table, sorted by key.
func (k *KB) APIs() []APIEntry { return k.apiList }

// API is the lifecycle entry of key ("core/v1/Endpoints", as Key spells it).
func (k *KB) API(key string) (APIEntry, bool) {
	a, ok := k.apis[key]
	return a, ok
}

// AddonCharts are the Helm charts an add-on matcher of the registry names. The map is the
// KB's: callers must not change it.
func (k *KB) AddonCharts() map[string]bool { return k.charts }

// AddonImages is which images an add-on matcher of the registry could claim, by a path
// segment a matcher starts with or a name label it lists: what the built-in rules read.
// Observe's Images adds what custom packs declare.
func (k *KB) AddonImages() inventory.ImageWatch { return k.images }

// Probes are the probes the knowledge base declares (ids "kb/<id>").
func (k *KB) Probes() []probe.Declared { return k.probes }

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
