package main

// The held-out test: the committed feature gate table against a second reading of the
// Kubernetes source that shares no code with the generator. From 1.32 the kubernetes module
// carries the feature list its own tool generates from the same maps
// (test/featuregates_linter/test_data/ in 1.32, test/compatibility_lifecycle/reference/ from
// 1.33, hack/update-featuregates.sh); this test reads those YAML files straight from the
// module zips, works out each gate's state at the minor with its own reading of the
// emulation-version rule, and compares gate by gate with
// policies/kb/upgradescope/kb/featuregates/data.json. Before 1.32 the module carries no such
// list, so those minors are not held out.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// listedGate is one entry of the Kubernetes feature list files.
type listedGate struct {
	Name           string `yaml:"name"`
	VersionedSpecs []struct {
		Default                 bool   `yaml:"default"`
		LockToDefault           bool   `yaml:"lockToDefault"`
		PreRelease              string `yaml:"preRelease"`
		Version                 string `yaml:"version"`
		MinCompatibilityVersion string `yaml:"minCompatibilityVersion"`
	} `yaml:"versionedSpecs"`
}

// heldState is a gate's state as this test compares it.
type heldState struct {
	Default       bool
	PreRelease    string
	LockToDefault bool
}

// committedTable is data.json as this test reads it.
type committedTable struct {
	Minors []string `json:"minors"`
	Gates  map[string]struct {
		Changes []struct {
			Minor         string `json:"minor"`
			Removed       bool   `json:"removed"`
			Default       *bool  `json:"default"`
			PreRelease    string `json:"preRelease"`
			LockToDefault bool   `json:"lockToDefault"`
		} `json:"changes"`
	} `json:"gates"`
}

// heldOutMinors are the minors whose kubernetes module carries a generated feature list,
// and where in it.
var heldOutMinors = map[int][]string{
	32: {"test/featuregates_linter/test_data/versioned_feature_list.yaml", "test/featuregates_linter/test_data/unversioned_feature_list.yaml"},
	33: {"test/compatibility_lifecycle/reference/versioned_feature_list.yaml", "test/compatibility_lifecycle/reference/unversioned_feature_list.yaml"},
	34: {"test/compatibility_lifecycle/reference/versioned_feature_list.yaml"},
	35: {"test/compatibility_lifecycle/reference/versioned_feature_list.yaml"},
	36: {"test/compatibility_lifecycle/reference/versioned_feature_list.yaml"},
	37: {"test/compatibility_lifecycle/reference/versioned_feature_list.yaml"},
}

func TestTheCommittedTableMatchesKubernetesOwnFeatureLists(t *testing.T) {
	committed := readCommittedTable(t)
	var mods []string
	for _, n := range slices.Sorted(maps.Keys(heldOutMinors)) {
		mods = append(mods,
			fmt.Sprintf("k8s.io/kubernetes@v1.%d.0", n),
			fmt.Sprintf("k8s.io/client-go@v0.%d.0", n),
			fmt.Sprintf("k8s.io/component-base@v0.%d.0", n))
	}
	zips := downloadZips(t, mods)
	for _, n := range slices.Sorted(maps.Keys(heldOutMinors)) {
		minor := fmt.Sprintf("1.%d", n)
		t.Run(minor, func(t *testing.T) {
			kube := fmt.Sprintf("k8s.io/kubernetes@v1.%d.0", n)
			// The list names a gate by its Go constant where that differs from the gate's
			// name until 1.37 (CPUCFSQuotaPeriod is "CustomCPUCFSQuotaPeriod"); the flag
			// takes the name, so the constants are read to translate.
			names := map[string]string{}
			for _, m := range regexp.MustCompile(`(?m)^\s*(\w+)\s+featuregate\.Feature\s*=\s*"(\w+)"`).FindAllSubmatch(zipFile(t, zips[kube], kube+"/pkg/features/kube_features.go"), -1) {
				if string(m[1]) != string(m[2]) {
					names[string(m[1])] = string(m[2])
				}
			}
			listed := map[string]heldState{}
			for _, f := range heldOutMinors[n] {
				for _, g := range readListedGates(t, zips[kube], kube+"/"+f) {
					if name, ok := names[g.Name]; ok {
						t.Logf("Kubernetes %s lists gate %s by its constant %s", minor, name, g.Name)
						g.Name = name
					}
					listed[g.Name] = listedStateAt(t, g, n)
				}
			}
			// The Kubernetes tool lists only maps typed with component-base's featuregate
			// types: client-go's own gates (which kube's binaries register through
			// pkg/features/client_adapter.go) and featuregate's AllAlpha and AllBeta are not
			// in its list. They are read here from their own source, by name only.
			unlisted := constNames(t, zips[fmt.Sprintf("k8s.io/client-go@v0.%d.0", n)],
				fmt.Sprintf("k8s.io/client-go@v0.%d.0/features/known_features.go", n), `(?m)^\s*\w+\s+Feature\s*=\s*"(\w+)"`)
			unlisted = append(unlisted, constNames(t, zips[fmt.Sprintf("k8s.io/component-base@v0.%d.0", n)],
				fmt.Sprintf("k8s.io/component-base@v0.%d.0/featuregate/feature_gate.go", n), `(?m)^\s*all\w+Gate\s+Feature\s*=\s*"(\w+)"`)...)
			if len(unlisted) < 3 {
				t.Fatalf("found only %q as client-go's and featuregate's own gates", unlisted)
			}

			got := committed.statesAt(n)
			if len(listed) < 150 {
				t.Fatalf("Kubernetes %s lists only %d gates; the list was misread", minor, len(listed))
			}
			for name, want := range listed {
				g, ok := got[name]
				switch {
				case !ok:
					t.Errorf("Kubernetes %s lists %s (%+v); the table does not declare it at %s", minor, name, want, minor)
				case g != want:
					t.Errorf("%s at %s: the table says %+v, Kubernetes's list %+v", name, minor, g, want)
				}
			}
			for name := range got {
				if _, ok := listed[name]; !ok && !slices.Contains(unlisted, name) {
					t.Errorf("the table declares %s at %s; Kubernetes %s does not list it", name, minor, minor)
				}
			}
			for _, name := range unlisted {
				if _, ok := got[name]; !ok {
					t.Errorf("the table does not declare %s at %s, which its own source declares", name, minor)
				}
			}
		})
	}
}

func readCommittedTable(t *testing.T) committedTable {
	t.Helper()
	b, err := os.ReadFile("../../policies/kb/upgradescope/kb/featuregates/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var c committedTable
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("read the committed table: %v", err)
	}
	return c
}

// statesAt is each gate's state at 1.n: its last change at or before it, unless that
// change removed it.
func (c committedTable) statesAt(n int) map[string]heldState {
	states := map[string]heldState{}
	for name, g := range c.Gates {
		var last *heldState
		for _, ch := range g.Changes {
			m, err := strconv.Atoi(strings.TrimPrefix(ch.Minor, "1."))
			if err != nil || m > n {
				continue
			}
			if ch.Removed {
				last = nil
				continue
			}
			last = &heldState{Default: ch.Default != nil && *ch.Default, PreRelease: ch.PreRelease, LockToDefault: ch.LockToDefault}
		}
		if last != nil {
			states[name] = *last
		}
	}
	return states
}

// listedStateAt applies the versioned specs as a binary of 1.n does at its default
// emulation version 1.n and minimum compatibility version 1.(n-1): the last spec not newer
// than 1.n whose minimum compatibility version, if any, is not newer than 1.(n-1). An
// unversioned entry ("") always applies.
func listedStateAt(t *testing.T, g listedGate, n int) heldState {
	t.Helper()
	minorOf := func(v string) int {
		if v == "" {
			return 0
		}
		maj, mnr, ok := strings.Cut(v, ".")
		m, err := strconv.Atoi(mnr)
		if !ok || maj != "1" || err != nil {
			t.Fatalf("gate %s: version %q", g.Name, v)
		}
		return m
	}
	for i := len(g.VersionedSpecs) - 1; i >= 0; i-- {
		s := g.VersionedSpecs[i]
		if minorOf(s.Version) > n || (s.MinCompatibilityVersion != "" && minorOf(s.MinCompatibilityVersion) > n-1) {
			continue
		}
		return heldState{Default: s.Default, PreRelease: s.PreRelease, LockToDefault: s.LockToDefault}
	}
	return heldState{PreRelease: "PreAlpha"}
}

func readListedGates(t *testing.T, zipPath, name string) []listedGate {
	t.Helper()
	var gates []listedGate
	if err := yaml.Unmarshal(zipFile(t, zipPath, name), &gates); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return gates
}

func constNames(t *testing.T, zipPath, name, pattern string) []string {
	t.Helper()
	var names []string
	for _, m := range regexp.MustCompile(pattern).FindAllSubmatch(zipFile(t, zipPath, name), -1) {
		names = append(names, string(m[1]))
	}
	return names
}

func zipFile(t *testing.T, zipPath, name string) []byte {
	t.Helper()
	z, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != name {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("%s has no %s", zipPath, name)
	return nil
}

// downloadZips fetches the modules' zips with go mod download. It fails when the module
// proxy cannot be reached: CI has it, and a skipped held-out test proves nothing. Only an
// explicit GOPROXY=off skips.
func downloadZips(t *testing.T, mods []string) map[string]string {
	t.Helper()
	if out, err := exec.Command("go", "env", "GOPROXY").Output(); err == nil && strings.TrimSpace(string(out)) == "off" {
		t.Skip("GOPROXY=off: the held-out test needs the Kubernetes module zips")
	}
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, mods...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	zips := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, Zip, Error string }
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("read go mod download's output: %v", err)
		}
		if m.Error != "" {
			t.Errorf("download %s@%s: %s", m.Path, m.Version, m.Error)
		}
		zips[m.Path+"@"+m.Version] = m.Zip
	}
	if err != nil || t.Failed() {
		t.Fatalf("go mod download: %v: %s", err, stderr.String())
	}
	return zips
}
