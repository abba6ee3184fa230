package advisor

import (
	"strings"

	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// offByDefaultSince is the first minor whose new beta APIs are not served unless the
// cluster enables them (KEP-3136,
// https://github.com/kubernetes/enhancements/tree/master/keps/sig-architecture/3136-beta-apis-off-by-default).
var offByDefaultSince = inventory.Version{Major: 1, Minor: 24}

// onByDefaultBetas are the betas introduced since 1.24 that Kubernetes still serves by
// default, as exceptions to KEP-3136: flowcontrol v1beta3 took over from the served
// v1beta2, SelfSubjectReview v1beta1 backs kubectl auth whoami, and aggregated discovery
// v2beta1 is what clients read first.
var onByDefaultBetas = map[string]bool{
	"flowcontrol.apiserver.k8s.io/v1beta3": true,
	"authentication.k8s.io/v1beta1":        true,
	"apidiscovery.k8s.io/v2beta1":          true,
}

// servedByTarget is, per target, what a cluster of that minor serves by default, as far as
// the knowledge base tells: a kind removed at or before the target, introduced after it, or
// at a beta introduced since 1.24 (off by default, see offByDefaultSince) is not served, and
// nothing at an alpha version is (alphas are never on by default); a group/version is not
// served when no kind the knowledge base lists at it is. An alpha the knowledge base does
// not describe is not served either, by its name. A beta it does not describe is served: the
// knowledge base lists every beta introduced since 1.24, so one it lacks predates KEP-3136,
// when betas were on by default, and Helm's default set (what client-go knows) holds it
// only because client-go still carries the types.
func servedByTarget(k *kb.KB, targets []string) map[string]render.Served {
	out := map[string]render.Served{}
	for _, t := range targets {
		target, err := inventory.ParseVersion(t)
		if err != nil {
			continue
		}
		listed := map[string]bool{}
		served := map[string]bool{}
		for _, e := range k.APIs() {
			gv := e.Version
			if e.Group != "" {
				gv = e.Group + "/" + e.Version
			}
			listed[gv], listed[gv+"/"+e.Kind] = true, true
			if servedAt(e, gv, target) {
				served[gv], served[gv+"/"+e.Kind] = true, true
			}
		}
		out[t] = func(entry string) bool {
			if alpha(entry) {
				return false
			}
			return !listed[entry] || served[entry]
		}
	}
	return out
}

// servedAt says whether a cluster at target serves e (at group/version gv) by default.
func servedAt(e kb.APIEntry, gv string, target inventory.Version) bool {
	if v, err := inventory.ParseVersion(e.Removed); err == nil && !v.LaterMinor(target) {
		return false
	}
	introduced, err := inventory.ParseVersion(e.Introduced)
	if err == nil && introduced.LaterMinor(target) {
		return false
	}
	if strings.Contains(e.Version, "alpha") {
		return false
	}
	offByDefault := strings.Contains(e.Version, "beta") && err == nil && !offByDefaultSince.LaterMinor(introduced)
	return !offByDefault || onByDefaultBetas[gv]
}

// alpha says whether a version set entry ("group/version" or "group/version/Kind") is at an
// alpha version.
func alpha(entry string) bool {
	parts := strings.Split(entry, "/")
	core := len(parts[0]) > 1 && parts[0][0] == 'v' && parts[0][1] >= '0' && parts[0][1] <= '9'
	if !core && len(parts) > 1 {
		return strings.Contains(parts[1], "alpha")
	}
	return strings.Contains(parts[0], "alpha")
}
