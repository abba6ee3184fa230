package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/Masterminds/semver/v3"
	"github.com/open-policy-agent/opa/v1/ast"

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

// lazyKubeVersionFacts is input.facts.kubeVersion as the engine passes it: computed only
// when a rule reads it, through JSON, as ast.LazyObject converts a value it does not know.
// The built-in rules read kubeVersionFlagged instead, and building a map of every release
// (thousands on a large cluster) on every evaluation for no reader cost more than the
// kubeVersion checks themselves.
type lazyKubeVersionFacts struct {
	inv     *inventory.Document
	targets []string
}

func (l lazyKubeVersionFacts) MarshalJSON() ([]byte, error) {
	return json.Marshal(kubeVersionFacts(l.inv, l.targets))
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
		case c.Check(semver.MustParse(t + ".0")):
			perTarget[t] = KubeVersionAdmits
		default:
			perTarget[t] = KubeVersionExcludes
		}
	}
	return perTarget
}

// kubeVersionFlag is a release (its index in input.inventory.helmReleases) and a target its
// chart's kubeVersion does not admit, with the fact (excludes or invalid).
type kubeVersionFlag struct {
	release      int
	target, fact string
}

// kubeVersionFlagged lists each release and target whose kubeVersion fact is not "admits", in
// release then target order, so the Helm rules reach the few releases a chart constraint
// flags without walking every release's facts.
func kubeVersionFlagged(inv *inventory.Document, targets []string) []kubeVersionFlag {
	out := []kubeVersionFlag{}
	check := constraintChecker(targets)
	for i, r := range inv.HelmReleases {
		if r.KubeVersion == "" {
			continue
		}
		perTarget := check(r.KubeVersion)
		for _, t := range targets {
			if fact := perTarget[t]; fact != KubeVersionAdmits {
				out = append(out, kubeVersionFlag{i, t, fact})
			}
		}
	}
	return out
}

// kubeVersionFlaggedValue is input.facts.kubeVersionFlagged: [release index, target, fact]
// arrays.
func kubeVersionFlaggedValue(flags []kubeVersionFlag) ast.Value {
	terms := make([]*ast.Term, len(flags))
	for i, f := range flags {
		terms[i] = ast.ArrayTerm(ast.InternedTerm(f.release), ast.StringTerm(f.target), ast.StringTerm(f.fact))
	}
	return ast.NewArray(terms...)
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

// indexValue is a chart index for input.facts as a lazy object of ready arrays: the add-on
// pack looks up the few charts its registry names, and an object of every chart of a large
// cluster (hundreds) is built, its keys hashed and sorted, only for a pack that iterates it.
func indexValue(index map[string][]int) ast.Object {
	native := make(map[string]any, len(index))
	for k, ids := range index {
		terms := make([]*ast.Term, len(ids))
		for i, id := range ids {
			terms[i] = ast.InternedTerm(id)
		}
		native[k] = ast.NewArray(terms...)
	}
	return ast.LazyObject(native)
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

// judgedReleases is input.facts.helmReleases: by index in inventory.helmReleases, the
// releases a built-in rule may read (a kubeVersion flag, a stored manifest API the kb
// deprecates, a chart the add-on registry matches), converted here so that the whole list,
// thousands of releases on a large cluster, is converted only for a pack that reads it.
// The rules read a release through lib/helm's release(i), which falls back to the whole
// list for an index missing here, so this choice decides only how fast, never what.
func (e *Engine) judgedReleases(inv *inventory.Document, flagged []kubeVersionFlag, byAPI, byChart map[string][]int) (ast.Value, error) {
	judged := map[int]bool{}
	for _, f := range flagged {
		judged[f.release] = true
	}
	// As the Helm pack's flagged_apis reads the kb: an API the apiserver stores and the kb
	// deprecates.
	for k, ids := range byAPI {
		if a, ok := e.kb.API(k); ok && a.Stored && a.Deprecated != "" {
			for _, i := range ids {
				judged[i] = true
			}
		}
	}
	for chart, ids := range byChart {
		if e.kb.MatchesChart(chart) {
			for _, i := range ids {
				judged[i] = true
			}
		}
	}
	indices := slices.Sorted(maps.Keys(judged))
	c := converter{strings: map[string]*ast.Term{}}
	items := make([][2]*ast.Term, len(indices))
	for n, i := range indices {
		v, err := c.valueOf(reflect.ValueOf(inv.HelmReleases[i]))
		if err != nil {
			return nil, fmt.Errorf("helmReleases/%d: %w", i, err)
		}
		items[n] = [2]*ast.Term{ast.InternedTerm(i), ast.NewTerm(v)}
	}
	return ast.NewObject(items...), nil
}
