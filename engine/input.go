package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/engine/facts"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Input is the document the rules judge: input to data.upgradescope.report.result. Its
// JSON encoding is what `opa eval -i` takes to reproduce a report (docs/custom-rules.md);
// Evaluate passes the same document converted for OPA without the JSON round trip.
type Input struct {
	Inventory *inventory.Document `json:"inventory"`
	Targets   []string            `json:"targets"`
	Now       string              `json:"now"`
	Ignore    []report.IgnoreRule `json:"ignore"`
	Facts     *facts.Document     `json:"facts"`
	Plan      bool                `json:"plan"`
	PlanFrom  string              `json:"planFrom"`
}

// Input returns the input Evaluate would give the rules for the same arguments. The report
// of `opa eval` over it (the built-in bundles and data.upgradescope.report.result) differs
// from Evaluate's only by what Go adds after the rules ran: the report's header, each
// finding's and target's teams, and the chart advisor's fix of a chart's findings (with the
// sentence it puts before their remediation). inv must not be modified while the Input is
// in use.
func (e *Engine) Input(inv *inventory.Document, targets []string, now time.Time, opts ...EvalOption) *Input {
	var ec evalConfig
	for _, o := range opts {
		o(&ec)
	}
	return e.input(inv, targets, now, ec)
}

func (e *Engine) input(inv *inventory.Document, targets []string, now time.Time, ec evalConfig) *Input {
	ignore := ec.ignore
	if ignore == nil {
		ignore = []report.IgnoreRule{}
	}
	return &Input{
		Inventory: inv,
		Targets:   targets,
		Now:       now.UTC().Format(time.RFC3339),
		Ignore:    ignore,
		Facts:     facts.Compute(inv, targets, e.knowledge),
		Plan:      ec.plan,
		PlanFrom:  ec.planFrom,
	}
}

// value converts in for OPA as its JSON encoding would decode, but faster: the inventory
// and the facts through toAST, what most packs never read left lazy. Only the keys of
// facts.helmReleases differ: numbers here, strings in JSON, where lib/helm's release(i)
// falls back to the inventory's list for the same release.
func (in *Input) value() (ast.Value, error) {
	invValue, err := inventoryValue(in.Inventory)
	if err != nil {
		return nil, fmt.Errorf("convert inventory: %w", err)
	}
	ignoreValue, err := toValue(in.Ignore)
	if err != nil {
		return nil, fmt.Errorf("convert ignore rules: %w", err)
	}
	factsValue, err := factsValue(in.Facts)
	if err != nil {
		return nil, fmt.Errorf("convert facts: %w", err)
	}
	ts := make([]*ast.Term, len(in.Targets))
	for i, t := range in.Targets {
		ts[i] = ast.StringTerm(t)
	}
	// A lazy object: an ast.Object built from items hashes them, which would convert the
	// inventory's images and Helm releases inventoryValue leaves for whoever reads them.
	return ast.LazyObject(map[string]any{
		"inventory": invValue,
		"targets":   ast.NewArray(ts...),
		"now":       ast.String(in.Now),
		"ignore":    ignoreValue,
		"facts":     factsValue,
		"plan":      ast.Boolean(in.Plan),
		"planFrom":  ast.String(in.PlanFrom),
	}), nil
}

// factsValue converts the facts, lazily too: the built-in rules read kubeVersionFlagged,
// not kubeVersion (an entry a release), which is converted only for a pack that reads it.
func factsValue(d *facts.Document) (map[string]any, error) {
	imagesValue, err := toAST(d.Images)
	if err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	manifestAPIsValue, err := toAST(d.HelmManifestAPIs)
	if err != nil {
		return nil, fmt.Errorf("helmManifestApis: %w", err)
	}
	releasesValue, err := releasesValue(d.HelmReleases)
	if err != nil {
		return nil, fmt.Errorf("helmReleases: %w", err)
	}
	// Converted here, with the inventory's interned strings: every behaviour looks its
	// probe up, and a lazy object would convert each through JSON on first read.
	probesValue, err := toAST(d.Probes)
	if err != nil {
		return nil, fmt.Errorf("probes: %w", err)
	}
	return map[string]any{
		"kubeVersion":        d.KubeVersion,
		"images":             imagesValue,
		"kubeVersionFlagged": kubeVersionFlaggedValue(d.KubeVersionFlagged),
		"helmReleases":       releasesValue,
		"helmManifestApis":   manifestAPIsValue,
		"helmChartIndex":     indexValue(d.HelmChartIndex),
		"probes":             probesValue,
		"probeGaps":          d.ProbeGaps,
		"crds":               intsValue(d.CRDs),
		"annotatedObjects":   ast.Boolean(d.AnnotatedObjects),
	}, nil
}

// kubeVersionFlaggedValue is input.facts.kubeVersionFlagged: [release index, target, fact]
// arrays.
func kubeVersionFlaggedValue(flags []facts.KubeVersionFlag) ast.Value {
	terms := make([]*ast.Term, len(flags))
	for i, f := range flags {
		terms[i] = ast.ArrayTerm(ast.InternedTerm(f.Release), ast.StringTerm(f.Target), ast.StringTerm(f.Fact))
	}
	return ast.NewArray(terms...)
}

// releasesValue is input.facts.helmReleases, keyed by the release's index as a number, as
// lib/helm's release(i) looks it up.
func releasesValue(releases map[int]inventory.HelmRelease) (ast.Value, error) {
	c := converter{strings: map[string]*ast.Term{}}
	items := make([][2]*ast.Term, 0, len(releases))
	for _, i := range slices.Sorted(maps.Keys(releases)) {
		r := releases[i]
		v, err := c.valueOf(reflect.ValueOf(&r).Elem())
		if err != nil {
			return nil, fmt.Errorf("%d: %w", i, err)
		}
		items = append(items, [2]*ast.Term{ast.InternedTerm(i), ast.NewTerm(v)})
	}
	return ast.NewObject(items...), nil
}

// indexValue is a chart index for input.facts as a lazy object of ready arrays: the add-on
// pack looks up the few charts its registry names, and an object of every chart of a large
// cluster (hundreds) is built, its keys hashed and sorted, only for a pack that iterates it.
func indexValue(index map[string][]int) ast.Object {
	native := make(map[string]any, len(index))
	for k, ids := range index {
		native[k] = intsValue(ids)
	}
	return ast.LazyObject(native)
}

func intsValue(ids []int) *ast.Array {
	terms := make([]*ast.Term, len(ids))
	for i, id := range ids {
		terms[i] = ast.InternedTerm(id)
	}
	return ast.NewArray(terms...)
}

func toValue(v any) (ast.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ast.ValueFromReader(bytes.NewReader(b))
}
