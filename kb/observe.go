package kb

import (
	"maps"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Observe is what collectors observe: the kinds whose objects they record, the images they
// look at closely and the probes they run. The engine builds it once from the knowledge base
// and what the custom packs declare (Engine.Observe); collectors take it whole. Its maps and
// set are shared: callers must not change them.
type Observe struct {
	// Watched holds "apiVersion/Kind" keys ("extensions/v1beta1/Ingress", "v1/Endpoints") of
	// the kinds whose objects are listed: every kind the knowledge base deprecates or
	// removes, or introduced after the oldest possible target, request-only kinds included
	// (a manifest can create one). Other objects are only counted.
	Watched map[string]bool
	// Known holds every "apiVersion/Kind" the knowledge base describes; an object of a
	// built-in group at an unknown version is listed too.
	Known map[string]bool
	// BuiltinGroups are the API groups Kubernetes serves itself ("" is core); objects of
	// other groups are custom resources, listed for the CRD rules.
	BuiltinGroups map[string]bool
	// Images says which images to observe closely (label sets, the workloads running them):
	// those an add-on matcher could claim, and the repositories custom packs read in full.
	// The zero value observes every image.
	Images inventory.ImageWatch
	// Probes are the field observations the bundles declare; objects of the kinds they name
	// are parsed and observed. nil observes nothing.
	Probes *probe.Set
}

// Lists says whether a collector records objects of apiVersion and kind one by one: a kind
// the knowledge base watches, a custom resource (for the CRD rules), or a version of a
// built-in group it does not know. Others are only counted, so a stored Helm manifest lists
// only these.
func (o Observe) Lists(apiVersion, kind string) bool {
	group, _, grouped := strings.Cut(apiVersion, "/")
	if !grouped {
		group = ""
	}
	key := apiVersion + "/" + kind
	return o.Watched[key] || !o.BuiltinGroups[group] || !o.Known[key]
}

// Observe is what collectors observe for this knowledge base and the custom packs: images
// are the repository prefixes the packs read in full ("*" is every image), sorted and
// without duplicates; probes are the packs' probes (ids "custom/<name>/<id>"), observed
// beside the knowledge base's.
func (k *KB) Observe(images []string, probes []probe.Declared) (Observe, error) {
	set, err := probe.NewSet(slices.Concat(k.probes, probes))
	if err != nil {
		return Observe{}, err
	}
	return Observe{
		Watched:       k.watchedKinds(),
		Known:         k.knownKinds(),
		BuiltinGroups: maps.Clone(k.groups),
		Images: inventory.ImageWatch{
			Segments: maps.Clone(k.images.Segments), Names: maps.Clone(k.images.Names),
			Repositories: slices.Clone(images),
		},
		Probes: set,
	}, nil
}
