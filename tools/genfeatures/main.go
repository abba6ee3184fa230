// Command genfeatures regenerates the built-in bundle's feature gate table from the
// Kubernetes source: for each minor in sources.json it fetches k8s.io/kubernetes and the
// staging modules that declare gates through the Go module proxy (go mod download), reads
// their feature gate maps with go/parser, and writes each gate's history (default,
// prerelease stage, lock, removal) to featuregates/data.json. Run it from the module root:
// go run ./tools/genfeatures.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/upgradescope/upgradescope/kb/kbdata"
)

//go:embed sources.json
var sourcesJSON []byte

// sources is sources.json: the modules read per minor, and the folder of a module read
// when not all of it.
type sources struct {
	Comment []string                     `json:"comment"`
	Walk    map[string]string            `json:"walk"`
	Minors  map[string]map[string]string `json:"minors"`
}

func main() {
	out := flag.String("out", "policies/kb/upgradescope/kb", "directory that receives featuregates/data.json")
	quiet := flag.Bool("q", false, "do not print the per-minor summary")
	flag.Parse()
	if err := run(context.Background(), *out, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "genfeatures:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, quiet bool) error {
	src, err := parseSources(sourcesJSON)
	if err != nil {
		return err
	}
	dirs, err := download(ctx, src.modules())
	if err != nil {
		return err
	}
	var minors []minorGates
	for _, n := range src.minors() {
		m, err := readMinor(n, src, dirs)
		if err != nil {
			return fmt.Errorf("Kubernetes %s: %w", n, err)
		}
		minors = append(minors, m)
	}
	t := buildTable(minors)
	if len(t.Gates) < 300 {
		return fmt.Errorf("only %d gates read; refusing to write a table that small", len(t.Gates))
	}
	if !quiet {
		fmt.Fprint(os.Stderr, summary(minors))
	}
	return kbdata.Write(filepath.Join(out, "featuregates", "data.json"), t)
}

func parseSources(b []byte) (sources, error) {
	var s sources
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("read sources.json: %w", err)
	}
	if len(s.Minors) == 0 {
		return s, fmt.Errorf("sources.json lists no minor")
	}
	for n, mods := range s.Minors {
		if _, err := parseMinor(n); err != nil {
			return s, fmt.Errorf("sources.json: %w", err)
		}
		if _, ok := mods["k8s.io/kubernetes"]; !ok {
			return s, fmt.Errorf("sources.json: %s does not read k8s.io/kubernetes", n)
		}
	}
	return s, nil
}

// minors are the minors listed, oldest first.
func (s sources) minors() []minorVersion {
	var ns []minorVersion
	for n := range s.Minors {
		v, _ := parseMinor(n)
		ns = append(ns, v)
	}
	slices.SortFunc(ns, func(a, b minorVersion) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	return ns
}

// modules are every path@version listed, once each, sorted.
func (s sources) modules() []string {
	seen := map[string]bool{}
	for _, mods := range s.Minors {
		for p, v := range mods {
			seen[p+"@"+v] = true
		}
	}
	var all []string
	for m := range seen {
		all = append(all, m)
	}
	slices.Sort(all)
	return all
}

// readMinor reads one minor's modules. A listed module without a gate map is an error: its
// gates have moved, and the list must say where.
func readMinor(n minorVersion, src sources, dirs map[string]string) (minorGates, error) {
	mods := src.Minors[n.String()]
	var modules []module
	for _, p := range slices.Sorted(maps.Keys(mods)) {
		m := module{Path: p, Version: mods[p], Walk: src.Walk[p]}
		m.Dir = dirs[m.String()]
		modules = append(modules, m)
	}
	r := newReader(modules)
	mg := minorGates{Minor: n}
	var decls []declaration
	for _, m := range modules {
		ds, files, err := r.read(m)
		if err != nil {
			return mg, err
		}
		if len(files) == 0 {
			return mg, fmt.Errorf("%s declares no feature gate map; drop it from sources.json or say where its gates went", m)
		}
		mg.Sources = append(mg.Sources, m.String())
		mg.Files = append(mg.Files, files...)
		decls = append(decls, ds...)
	}
	gates, err := gatesAt(n, decls)
	if err != nil {
		return mg, err
	}
	mg.Gates = gates
	return mg, nil
}
