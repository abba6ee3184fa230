// Package facts computes input.facts: what Go works out from an inventory before the rules
// judge it, where Rego has no builtin for the question (Helm's semver constraints) or where
// one pass in Go spares the rules a walk over a large inventory (indices of the releases,
// CRDs and images a rule may judge). Facts never judge: every finding, verdict and score is
// the rules'. Most facts decide only how fast the rules run, never what they find, and the
// rules read the whole inventory without them; images, kubeVersion, kubeVersionFlagged,
// probes and probeGaps are what the rules read instead of the inventory (docs/custom-rules.md
// lists each fact).
//
// The package links no OPA: the engine converts a Document into the rules' input, and
// testdata/<scenario>/facts.json holds each scenario's Document.
package facts

import (
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Knowledge is what the facts need from the loaded bundles.
type Knowledge struct {
	// Images are the images an add-on matcher of the registry could claim.
	Images inventory.ImageWatch
	// Probes are the field observations the loaded bundles declare.
	Probes *probe.Set
	// FlaggedStoredAPIs are the API keys ("<group or core>/<version>/<Kind>") the knowledge
	// base deprecates and the apiserver stores, as the Helm pack's flagged_apis reads them.
	FlaggedStoredAPIs map[string]bool
	// AddonCharts are the Helm charts the add-on registry matches (kb.addonindex.charts).
	AddonCharts map[string]bool
}

// Document is input.facts. Indices are into the inventory's lists (input.inventory.crds,
// input.inventory.helmReleases).
type Document struct {
	// KubeVersion is each Helm release's ("namespace/name") kubeVersion fact per target:
	// admits, excludes or invalid. It is computed only when it is encoded.
	KubeVersion KubeVersion `json:"kubeVersion"`
	// Images are the inventory's images an add-on matcher could claim, in the
	// workloadImages shape.
	Images []inventory.WorkloadImage `json:"images"`
	// KubeVersionFlagged are the releases and targets whose kubeVersion fact is not admits.
	KubeVersionFlagged []KubeVersionFlag `json:"kubeVersionFlagged"`
	// HelmReleases are the releases a built-in rule may read, by index.
	HelmReleases map[int]inventory.HelmRelease `json:"helmReleases"`
	// HelmManifestAPIs are the indices of the releases whose stored manifest uses an API,
	// by API key.
	HelmManifestAPIs map[string][]int `json:"helmManifestApis"`
	// HelmChartIndex are the indices of each chart's releases, by chart name.
	HelmChartIndex map[string][]int `json:"helmChartIndex"`
	// Probes are the observations of the declared probes, by qualified id; ProbeGaps the
	// declared probes without a usable observation, with the reason.
	Probes    map[string]inventory.Probe `json:"probes"`
	ProbeGaps map[string]string          `json:"probeGaps"`
	// CRDs are the indices of the CRDs a crd-version finding may be about.
	CRDs []int `json:"crds"`
	// AnnotatedObjects says whether any object carries a suppression annotation.
	AnnotatedObjects bool `json:"annotatedObjects"`
}

// Compute works out the facts of inv for targets. inv is not modified, and must not be
// while the Document is in use: KubeVersion reads it when it is encoded.
func Compute(inv *inventory.Document, targets []string, k Knowledge) *Document {
	flagged := kubeVersionFlagged(inv, targets)
	byAPI, byChart := helmManifestAPIs(inv), helmChartIndex(inv)
	observed, gaps := probeFacts(inv, k.Probes)
	return &Document{
		KubeVersion:        KubeVersion{inv, targets},
		Images:             imageFacts(inv, k.Images),
		KubeVersionFlagged: flagged,
		HelmReleases:       judgedReleases(inv, k, flagged, byAPI, byChart),
		HelmManifestAPIs:   byAPI,
		HelmChartIndex:     byChart,
		Probes:             observed,
		ProbeGaps:          gaps,
		CRDs:               judgedCRDs(inv),
		AnnotatedObjects:   annotatedObjects(inv),
	}
}

// imageFacts are the repositories and versions of the inventory's images an add-on matcher
// could claim (watch observes them), in the workloadImages shape: the add-on pack walks
// these, so an image no matcher can claim costs one index lookup per path segment here and
// nothing in Rego.
func imageFacts(inv *inventory.Document, watch inventory.ImageWatch) []inventory.WorkloadImage {
	out := []inventory.WorkloadImage{}
	for _, w := range inv.WorkloadImages {
		var versions []inventory.ImageVersion
		for _, v := range w.Versions {
			if watch.ObservesVersion(w.Repository, v) {
				versions = append(versions, v)
			}
		}
		if len(versions) > 0 {
			out = append(out, inventory.WorkloadImage{Repository: w.Repository, Versions: versions})
		}
	}
	return out
}
