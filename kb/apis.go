package kb

import (
	"sort"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// oldestTarget is the oldest minor a target may name; APIs introduced after it can be "not
// served yet" for some target, so collectors record them too.
const oldestTarget = 1016

// APIEntry is one group/version/kind of the API lifecycle data.
type APIEntry struct {
	Group       string `json:"group"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	Introduced  string `json:"introduced,omitempty"`
	Deprecated  string `json:"deprecated,omitempty"`
	Removed     string `json:"removed,omitempty"`
	Replacement string `json:"replacement,omitempty"`
	// Resource is the kind's REST resource ("ingresses"); empty for a kind served by none.
	Resource  string   `json:"resource,omitempty"`
	Stored    bool     `json:"stored"`
	Citations []string `json:"citations,omitempty"`
}

// Key is the entry's group/version/Kind ("core" for the core group), as the kb keys it.
func (a APIEntry) Key() string {
	group := a.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + a.Version + "/" + a.Kind
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

// FlaggedAPIs are the stored kinds the knowledge base deprecates or removes: what a live
// collector lists. Request-only kinds are left out: the apiserver keeps no objects of them
// to list, and only the deprecated-API calls it counts show their use. Sorted by
// apiVersion/Kind.
func (k *KB) FlaggedAPIs() []APIEntry {
	var out []APIEntry
	for _, a := range k.apis {
		if a.Stored && (a.Deprecated != "" || a.Removed != "") {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return apiVersionKind(out[i].Group, out[i].Version, out[i].Kind) < apiVersionKind(out[j].Group, out[j].Version, out[j].Kind)
	})
	return out
}

// watchedKinds is the set of API versions collectors record from manifests, as
// "apiVersion/Kind" keys ("extensions/v1beta1/Ingress", "v1/Endpoints"): every kind the
// knowledge base deprecates or removes, or introduced after the oldest possible target.
// Request-only kinds (TokenReview, SubjectAccessReview) are watched too: a manifest can
// create one, and a target that does not serve its API refuses it like any other. Everything
// else is served by every target and cannot break an upgrade, so it is counted but never
// listed. What a live collector lists is FlaggedAPIs.
func (k *KB) watchedKinds() map[string]bool {
	out := map[string]bool{}
	for _, a := range k.apis {
		if a.Deprecated != "" || a.Removed != "" || introducedAfterOldestTarget(a.Introduced) {
			out[apiVersionKind(a.Group, a.Version, a.Kind)] = true
		}
	}
	return out
}

// knownKinds is every "apiVersion/Kind" the knowledge base describes.
func (k *KB) knownKinds() map[string]bool {
	out := make(map[string]bool, len(k.apis))
	for _, a := range k.apis {
		out[apiVersionKind(a.Group, a.Version, a.Kind)] = true
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
