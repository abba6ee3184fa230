package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/upgradescope/upgradescope/engine/facts"
	"github.com/upgradescope/upgradescope/inventory"
)

// oldestTarget is the oldest minor a target may name; APIs introduced after it can be "not
// served yet" for some target, so collectors record them too.
const oldestTarget = 1016

// APIEntry is one group/version/kind of the API lifecycle data.
type APIEntry struct {
	Group       string   `json:"group"`
	Version     string   `json:"version"`
	Kind        string   `json:"kind"`
	Introduced  string   `json:"introduced,omitempty"`
	Deprecated  string   `json:"deprecated,omitempty"`
	Removed     string   `json:"removed,omitempty"`
	Replacement string   `json:"replacement,omitempty"`
	Stored      bool     `json:"stored"`
	Citations   []string `json:"citations,omitempty"`
}

// readKB reads what the engine itself needs from the kb bundle: the horizon and the API
// lifecycle data collectors take their watched kinds from.
func (e *Engine) readKB(l loaded) error {
	kb, ok := lookup(l.b.Data, "upgradescope", "kb")
	if !ok {
		return fmt.Errorf("kb bundle (%s) has no upgradescope/kb data", l.origin)
	}
	_ = remarshal(kb["groups"], &e.groups)
	if err := remarshal(kb["meta"], &e.kb); err != nil || e.kb.Horizon == "" {
		return fmt.Errorf("kb bundle (%s): /upgradescope/kb/meta has no horizon", l.origin)
	}
	if err := remarshal(kb["apis"], &e.apis); err != nil || len(e.apis) == 0 {
		return fmt.Errorf("kb bundle (%s): /upgradescope/kb/apis holds no API lifecycle data", l.origin)
	}
	if err := e.readKnowledge(kb); err != nil {
		return fmt.Errorf("kb bundle (%s): %w", l.origin, err)
	}
	var index struct {
		FirstSegments map[string]bool     `json:"firstSegments"`
		Labels        map[string][]string `json:"labels"`
		Charts        map[string][]string `json:"charts"`
	}
	_ = remarshal(kb["addonindex"], &index)
	e.images = inventory.ImageWatch{Segments: map[string]bool{}, Names: map[string]bool{}}
	maps.Copy(e.images.Segments, index.FirstSegments)
	for name := range index.Labels {
		e.images.Names[name] = true
	}
	e.addonCharts = map[string]bool{}
	for chart := range index.Charts {
		e.addonCharts[chart] = true
	}
	return nil
}

// factsKnowledge is what input.facts needs from the loaded bundles. An API is flagged as
// the Helm pack's flagged_apis reads the kb: one the apiserver stores and the kb deprecates.
func (e *Engine) factsKnowledge() facts.Knowledge {
	flagged := map[string]bool{}
	for k, a := range e.apis {
		if a.Stored && a.Deprecated != "" {
			flagged[k] = true
		}
	}
	return facts.Knowledge{Images: e.images, Probes: e.probes, FlaggedStoredAPIs: flagged, AddonCharts: e.addonCharts}
}

// ImageWatch is which images collectors observe: those an add-on matcher of the registry
// could claim, by a path segment a matcher starts with or a name label it lists, and the
// repositories custom packs declare they read (data.upgradescope.custom.<name>.observe.images).
func (e *Engine) ImageWatch() inventory.ImageWatch {
	return inventory.ImageWatch{
		Segments: maps.Clone(e.images.Segments), Names: maps.Clone(e.images.Names),
		Repositories: slices.Clone(e.declaredImages),
	}
}

// declaredImages reads the repository prefixes custom packs declare they read in full, as
// data: upgradescope.custom.<name>.observe.images, a list of strings ("*" is every image).
func declaredImages(set []loaded) ([]string, error) {
	var out []string
	for _, l := range set {
		if l.builtin {
			continue
		}
		packs, _ := lookup(l.b.Data, "upgradescope", "custom")
		for name, pack := range packs {
			fields, _ := pack.(map[string]any)
			observe, _ := fields["observe"].(map[string]any)
			if observe == nil || observe["images"] == nil {
				continue
			}
			list, ok := observe["images"].([]any)
			for _, v := range list {
				prefix, isString := v.(string)
				ok = ok && isString && prefix != ""
				out = append(out, prefix)
			}
			if !ok {
				return nil, fmt.Errorf("custom pack %s (%s): upgradescope.custom.%s.observe.images must be a list of repository prefixes", name, l.origin, name)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

func lookup(data map[string]any, path ...string) (map[string]any, bool) {
	cur := data
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// WatchedKinds is the set of API versions collectors record from manifests, as
// "apiVersion/Kind" keys ("extensions/v1beta1/Ingress", "v1/Endpoints"): every kind the
// knowledge base deprecates or removes, or introduced after the oldest possible target.
// Request-only kinds (TokenReview, SubjectAccessReview) are watched too: a manifest can
// create one, and a target that does not serve its API refuses it like any other. Everything
// else is served by every target and cannot break an upgrade, so it is counted but never
// listed. What a live collector lists is FlaggedAPIs.
func (e *Engine) WatchedKinds() map[string]bool {
	out := map[string]bool{}
	for _, a := range e.apis {
		if a.Deprecated != "" || a.Removed != "" || introducedAfterOldestTarget(a.Introduced) {
			out[apiVersionKind(a.Group, a.Version, a.Kind)] = true
		}
	}
	return out
}

// KnownKinds is every "apiVersion/Kind" the knowledge base describes.
func (e *Engine) KnownKinds() map[string]bool {
	out := make(map[string]bool, len(e.apis))
	for _, a := range e.apis {
		out[apiVersionKind(a.Group, a.Version, a.Kind)] = true
	}
	return out
}

// BuiltinGroups are the API groups Kubernetes serves itself ("" is core).
func (e *Engine) BuiltinGroups() map[string]bool {
	out := make(map[string]bool, len(e.groups))
	for g, ok := range e.groups {
		out[g] = ok
	}
	return out
}

func introducedAfterOldestTarget(introduced string) bool {
	v, err := inventory.ParseVersion(introduced)
	return err == nil && v.Major*1000+v.Minor > oldestTarget
}

func apiVersionKind(group, version, kind string) string {
	if group == "" {
		return version + "/" + kind
	}
	return group + "/" + version + "/" + kind
}

// FlaggedAPIs are the stored kinds the knowledge base deprecates or removes: what a live
// collector lists. Request-only kinds are left out: the apiserver keeps no objects of them
// to list, and only the deprecated-API calls it counts show their use. Sorted by key.
func (e *Engine) FlaggedAPIs() []APIEntry {
	var out []APIEntry
	for _, a := range e.apis {
		if a.Stored && (a.Deprecated != "" || a.Removed != "") {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return apiVersionKind(out[i].Group, out[i].Version, out[i].Kind) < apiVersionKind(out[j].Group, out[j].Version, out[j].Kind)
	})
	return out
}

// ReplacementGVK splits the replacement key ("<group or core>/<version>/<Kind>").
func (a APIEntry) ReplacementGVK() (group, version, kind string) {
	parts := strings.Split(a.Replacement, "/")
	if len(parts) != 3 {
		return "", "", ""
	}
	if parts[0] == "core" {
		parts[0] = ""
	}
	return parts[0], parts[1], parts[2]
}
