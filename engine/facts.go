package engine

import (
	"github.com/Masterminds/semver/v3"

	"github.com/upgradescope/upgradescope/inventory"
)

// Helm kubeVersion facts, per release ("namespace/name") and target.
const (
	KubeVersionAdmits   = "admits"
	KubeVersionExcludes = "excludes"
	KubeVersionInvalid  = "invalid"
)

// kubeVersionFacts checks each Helm release's kubeVersion constraint against each target
// with the semver library Helm itself uses, so "-0" pre-release bounds behave as in
// `helm install`. Rego has no semver-constraint builtin, and a custom one would break stock
// `opa test`; the rule pack decides what a fact means.
//
// Charts share a handful of constraints, so each distinct one is parsed and checked once.
func kubeVersionFacts(inv *inventory.Document, targets []string) map[string]map[string]string {
	facts := map[string]map[string]string{}
	byConstraint := map[string]map[string]string{}
	for _, r := range inv.HelmReleases {
		if r.KubeVersion == "" {
			continue
		}
		perTarget, ok := byConstraint[r.KubeVersion]
		if !ok {
			perTarget = checkConstraint(r.KubeVersion, targets)
			byConstraint[r.KubeVersion] = perTarget
		}
		facts[r.Namespace+"/"+r.Name] = perTarget
	}
	return facts
}

func checkConstraint(constraint string, targets []string) map[string]string {
	perTarget := map[string]string{}
	c, err := semver.NewConstraint(constraint)
	for _, t := range targets {
		switch {
		case err != nil:
			perTarget[t] = KubeVersionInvalid
		case c.Check(semver.MustParse(t + ".0")):
			perTarget[t] = KubeVersionAdmits
		default:
			perTarget[t] = KubeVersionExcludes
		}
	}
	return perTarget
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
