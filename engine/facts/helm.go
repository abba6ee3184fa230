package facts

import (
	"encoding/json"
	"fmt"

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
	check := constraintChecker(targets)
	for _, r := range inv.HelmReleases {
		if r.KubeVersion != "" {
			facts[r.Namespace+"/"+r.Name] = check(r.KubeVersion)
		}
	}
	return facts
}

// KubeVersion is the kubeVersion fact, computed when it is encoded: the engine passes it to
// the rules to be converted only when a rule reads it. The built-in rules read
// KubeVersionFlagged instead, and building a map of every release (thousands on a large
// cluster) on every evaluation for no reader cost more than the kubeVersion checks
// themselves.
type KubeVersion struct {
	inv     *inventory.Document
	targets []string
}

// MarshalJSON encodes the facts by release and target.
func (k KubeVersion) MarshalJSON() ([]byte, error) {
	return json.Marshal(kubeVersionFacts(k.inv, k.targets))
}

// constraintChecker answers checkConstraint at targets, each distinct constraint checked once.
func constraintChecker(targets []string) func(constraint string) map[string]string {
	byConstraint := map[string]map[string]string{}
	return func(constraint string) map[string]string {
		perTarget, ok := byConstraint[constraint]
		if !ok {
			perTarget = checkConstraint(constraint, targets)
			byConstraint[constraint] = perTarget
		}
		return perTarget
	}
}

func checkConstraint(constraint string, targets []string) map[string]string {
	perTarget := map[string]string{}
	c, err := semver.NewConstraint(constraint)
	for _, t := range targets {
		switch {
		case err != nil:
			perTarget[t] = KubeVersionInvalid
		case admits(c, t):
			perTarget[t] = KubeVersionAdmits
		default:
			perTarget[t] = KubeVersionExcludes
		}
	}
	return perTarget
}

// AdmitsTarget says whether a chart's kubeVersion constraint admits the target minor
// ("1.37"), exactly as the Helm rules judge a release's (the target's .0 patch, Helm's semver
// library, "-0" bounds admitting vendor suffixes), so the chart advisor can pass over a
// version the rules would block without fetching it. An error is a constraint or target
// that does not parse: the rules raise no blocker for it.
func AdmitsTarget(constraint, target string) (bool, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false, fmt.Errorf("parse kubeVersion %q: %w", constraint, err)
	}
	if _, err := semver.NewVersion(target + ".0"); err != nil {
		return false, fmt.Errorf("parse target %q: %w", target, err)
	}
	return admits(c, target), nil
}

func admits(c *semver.Constraints, target string) bool {
	return c.Check(semver.MustParse(target + ".0"))
}

// KubeVersionFlag is a release (its index in input.inventory.helmReleases) and a target its
// chart's kubeVersion does not admit, with the fact (excludes or invalid). It is encoded
// as the array [release, target, fact] the Helm rules destructure.
type KubeVersionFlag struct {
	Release      int
	Target, Fact string
}

// MarshalJSON encodes f as [release, target, fact].
func (f KubeVersionFlag) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{f.Release, f.Target, f.Fact})
}

// kubeVersionFlagged lists each release and target whose kubeVersion fact is not "admits", in
// release then target order, so the Helm rules reach the few releases a chart constraint
// flags without walking every release's facts.
func kubeVersionFlagged(inv *inventory.Document, targets []string) []KubeVersionFlag {
	out := []KubeVersionFlag{}
	check := constraintChecker(targets)
	for i, r := range inv.HelmReleases {
		if r.KubeVersion == "" {
			continue
		}
		perTarget := check(r.KubeVersion)
		for _, t := range targets {
			if fact := perTarget[t]; fact != KubeVersionAdmits {
				out = append(out, KubeVersionFlag{i, t, fact})
			}
		}
	}
	return out
}

// helmChartIndex lists, by chart name, the indices of the chart's releases in
// input.inventory.helmReleases, so the add-on pack looks up the few charts its registry
// knows instead of every release.
func helmChartIndex(inv *inventory.Document) map[string][]int {
	index := map[string][]int{}
	for i, r := range inv.HelmReleases {
		index[r.Chart] = append(index[r.Chart], i)
	}
	return index
}

// helmManifestAPIs lists, by API key ("<group or core>/<version>/<Kind>", as kb.apis and
// lib/apis key them), the indices in input.inventory.helmReleases of the releases whose
// stored manifest uses the API, in order and once each, so the Helm rules walk only the
// releases of the APIs the knowledge base flags.
func helmManifestAPIs(inv *inventory.Document) map[string][]int {
	byKey := map[string][]int{}
	for i, r := range inv.HelmReleases {
		for _, u := range r.ManifestAPIs {
			group := u.Group
			if group == "" {
				group = "core"
			}
			k := group + "/" + u.Version + "/" + u.Kind
			if ids := byKey[k]; len(ids) == 0 || ids[len(ids)-1] != i {
				byKey[k] = append(ids, i)
			}
		}
	}
	return byKey
}

// judgedReleases is input.facts.helmReleases: by index in inventory.helmReleases, the
// releases a built-in rule may read (a kubeVersion flag, a stored manifest API the kb
// deprecates, a chart the add-on registry matches), so that the whole list, thousands of
// releases on a large cluster, is converted for Rego only for a pack that reads it. The
// rules read a release through lib/helm's release(i), which falls back to the whole list
// for an index missing here, so this choice decides only how fast, never what.
func judgedReleases(inv *inventory.Document, k Knowledge, flagged []KubeVersionFlag, byAPI, byChart map[string][]int) map[int]inventory.HelmRelease {
	judged := map[int]inventory.HelmRelease{}
	for _, f := range flagged {
		judged[f.Release] = inv.HelmReleases[f.Release]
	}
	for key, ids := range byAPI {
		if k.FlaggedStoredAPIs[key] {
			for _, i := range ids {
				judged[i] = inv.HelmReleases[i]
			}
		}
	}
	for chart, ids := range byChart {
		if k.AddonCharts[chart] {
			for _, i := range ids {
				judged[i] = inv.HelmReleases[i]
			}
		}
	}
	return judged
}
