package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeModule lays out a module's files under a temporary folder.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTheReaderFindsEveryRegistryShapeAndResolvesItsKeys(t *testing.T) {
	generic := writeModule(t, map[string]string{
		"pkg/features/consts.go": `package features
import "k8s.io/component-base/featuregate"
const (
	WatchList featuregate.Feature = "WatchList"
)`,
		"pkg/features/kube_features.go": `package features
import "k8s.io/component-base/featuregate"
var defaultKubernetesFeatureGates = map[featuregate.Feature]featuregate.FeatureSpec{
	WatchList: {Default: false, PreRelease: featuregate.Alpha},
}`,
	})
	logs := writeModule(t, map[string]string{
		"logs/kube_features.go": `package logs
import "k8s.io/component-base/featuregate"
const (
	ContextualLogging featuregate.Feature = "ContextualLogging"
	contextualLoggingDefault = true
)
func featureGates() map[featuregate.Feature]featuregate.FeatureSpec {
	return map[featuregate.Feature]featuregate.FeatureSpec{
		ContextualLogging: {Default: contextualLoggingDefault, PreRelease: featuregate.Beta},
	}
}`,
	})
	kube := writeModule(t, map[string]string{
		"pkg/features/kube_features.go": `package features
import (
	"k8s.io/apimachinery/pkg/util/version"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/component-base/featuregate"
)
const (
	AppArmor featuregate.Feature = "AppArmor"
	Renamed featuregate.Feature = "TheGatesRealName"
)
var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	AppArmor: {
		{Version: version.MustParse("1.4"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MajorMinor(1, 31), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
	Renamed: {
		{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse("1.37")},
	},
	genericfeatures.WatchList: {
		{Version: version.MustParse("1.27"), Default: false, PreRelease: featuregate.Alpha},
	},
}
func testGate() {
	_ = map[featuregate.Feature]featuregate.FeatureSpec{"NotARegistry": {Default: true}}
}`,
		"pkg/features/kube_features_test.go": `package features
var testOnly = map[featuregate.Feature]featuregate.FeatureSpec{"TestOnly": {}}`,
		"pkg/other/nothing.go": `package other
const X = "FeatureSpec in a string is not a map"`,
	})
	modules := []module{
		{Path: "k8s.io/kubernetes", Version: "v1.37.0", Dir: kube, Walk: "pkg"},
		{Path: "k8s.io/apiserver", Version: "v0.37.0", Dir: generic},
		{Path: "k8s.io/component-base", Version: "v0.37.0", Dir: logs},
	}
	r := newReader(modules)
	var decls []declaration
	var files []string
	for _, m := range modules {
		ds, fs, err := r.read(m)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, ds...)
		files = append(files, fs...)
	}
	wantFiles := []string{
		"k8s.io/kubernetes@v1.37.0/pkg/features/kube_features.go",
		"k8s.io/apiserver@v0.37.0/pkg/features/kube_features.go",
		"k8s.io/component-base@v0.37.0/logs/kube_features.go",
	}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files holding a map = %q, want %q", files, wantFiles)
	}
	gates, err := gatesAt(minorVersion{1, 37}, decls)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]state{
		"AppArmor":          {Default: true, PreRelease: "GA", LockToDefault: true},
		"TheGatesRealName":  {Default: false, PreRelease: "Beta"},
		"WatchList":         {Default: false, PreRelease: "Alpha"},
		"ContextualLogging": {Default: true, PreRelease: "Beta"},
	}
	if !reflect.DeepEqual(gates, want) {
		t.Errorf("gates at 1.37 = %+v\nwant %+v", gates, want)
	}
}

func TestTheReaderRefusesWhatItCannotRead(t *testing.T) {
	cases := []struct {
		name, source, want string
	}{
		{"a key of an unknown package", `package features
import "k8s.io/component-base/featuregate"
var m = map[featuregate.Feature]featuregate.FeatureSpec{elsewhere.X: {}}`, "does not import"},
		{"a key no constant names", `package features
import "k8s.io/component-base/featuregate"
var m = map[featuregate.Feature]featuregate.FeatureSpec{Missing: {}}`, "not a string constant"},
		{"a spec field it does not know", `package features
import "k8s.io/component-base/featuregate"
var m = map[featuregate.Feature]featuregate.FeatureSpec{"X": {Emulated: true}}`, "spec field Emulated"},
		{"a default that is an expression", `package features
import "k8s.io/component-base/featuregate"
var m = map[featuregate.Feature]featuregate.FeatureSpec{"X": {Default: !false}}`, "a bool"},
		{"a versioned spec without a version", `package features
import "k8s.io/component-base/featuregate"
var m = map[featuregate.Feature]featuregate.VersionedSpecs{"X": {{Default: true}}}`, "without a Version"},
		{"a key from a module not read", `package features
import (
	"k8s.io/component-base/featuregate"
	other "k8s.io/other/features"
)
var m = map[featuregate.Feature]featuregate.FeatureSpec{other.X: {}}`, "add its module to sources.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeModule(t, map[string]string{"pkg/features/f.go": c.source})
			m := module{Path: "k8s.io/kubernetes", Version: "v1.30.0", Dir: dir}
			_, _, err := newReader([]module{m}).read(m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestStateAtFollowsTheEmulationVersionRule(t *testing.T) {
	v := func(s string) minorVersion { m, _ := parseMinor(s); return m }
	specs := []spec{
		{Version: v("1.0"), HasVersion: true, Default: true, PreRelease: "GA"},
		{Version: v("1.33"), HasVersion: true, Default: false, PreRelease: "Deprecated"},
		{Version: v("1.36"), HasVersion: true, Default: false, PreRelease: "Deprecated", LockToDefault: true},
		{Version: v("1.36"), HasVersion: true, Default: false, PreRelease: "Deprecated", LockToDefault: true, MinCompat: v("1.36"), HasMinCompat: true},
	}
	cases := []struct {
		minor string
		want  state
	}{
		{"1.32", state{Default: true, PreRelease: "GA"}},
		{"1.33", state{Default: false, PreRelease: "Deprecated"}},
		{"1.35", state{Default: false, PreRelease: "Deprecated"}},
		{"1.36", state{Default: false, PreRelease: "Deprecated", LockToDefault: true}},
	}
	for _, c := range cases {
		if got := stateAt(specs, v(c.minor)); got != c.want {
			t.Errorf("stateAt(%s) = %+v, want %+v", c.minor, got, c.want)
		}
	}
	future := []spec{{Version: v("1.38"), HasVersion: true, Default: false, PreRelease: "Alpha"}}
	if got := stateAt(future, v("1.37")); got.PreRelease != "PreAlpha" {
		t.Errorf("a gate whose first spec is after the minor is %+v, want PreAlpha", got)
	}
	unversioned := []spec{{Default: true, PreRelease: "Beta"}}
	if got := stateAt(unversioned, v("1.37")); got != (state{Default: true, PreRelease: "Beta"}) {
		t.Errorf("an unversioned spec is %+v at 1.37", got)
	}
}

func TestTwoMapsDeclaringAGateDifferentlyIsAMisreading(t *testing.T) {
	decls := []declaration{
		{Name: "X", Specs: []spec{{Default: true, PreRelease: "Beta"}}, File: "a.go", Line: 1},
		{Name: "X", Specs: []spec{{Default: false, PreRelease: "Beta"}}, File: "b.go", Line: 2},
	}
	if _, err := gatesAt(minorVersion{1, 30}, decls); err == nil || !strings.Contains(err.Error(), "b.go:2") {
		t.Errorf("conflicting declarations accepted: %v", err)
	}
	decls[1].Specs[0].Default = true
	if _, err := gatesAt(minorVersion{1, 30}, decls); err != nil {
		t.Errorf("a gate relisted identically refused: %v", err)
	}
}

func TestTheTableRecordsChangesAndRemovalsNotEveryMinor(t *testing.T) {
	beta := state{Default: true, PreRelease: "Beta"}
	ga := state{Default: true, PreRelease: "GA", LockToDefault: true}
	minors := []minorGates{
		{Minor: minorVersion{1, 30}, Gates: map[string]state{"Stays": beta, "Goes": beta}},
		{Minor: minorVersion{1, 31}, Gates: map[string]state{"Stays": beta, "Goes": ga}},
		{Minor: minorVersion{1, 32}, Gates: map[string]state{"Stays": beta, "Goes": ga, "Comes": beta}},
		{Minor: minorVersion{1, 33}, Gates: map[string]state{"Stays": beta, "Comes": beta}},
	}
	tbl := buildTable(minors)
	b, err := json.Marshal(tbl.Gates)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Comes":{"changes":[{"minor":"1.32","default":true,"preRelease":"Beta"}]},` +
		`"Goes":{"changes":[{"minor":"1.30","default":true,"preRelease":"Beta"},{"minor":"1.31","default":true,"preRelease":"GA","lockToDefault":true},{"minor":"1.33","removed":true}],"removed":"1.33"},` +
		`"Stays":{"changes":[{"minor":"1.30","default":true,"preRelease":"Beta"}]}}`
	if string(b) != want {
		t.Errorf("gates =\n%s\nwant\n%s", b, want)
	}
	if !reflect.DeepEqual(tbl.Minors, []string{"1.30", "1.31", "1.32", "1.33"}) {
		t.Errorf("minors = %q", tbl.Minors)
	}
}

func TestSourcesListEveryMinorWithKubernetesAndOneVersionPerModule(t *testing.T) {
	src, err := parseSources(sourcesJSON)
	if err != nil {
		t.Fatal(err)
	}
	ns := src.minors()
	if ns[0] != (minorVersion{1, 23}) || ns[len(ns)-1] != (minorVersion{1, 37}) {
		t.Errorf("sources.json reads %v to %v, want 1.23 to 1.37", ns[0], ns[len(ns)-1])
	}
	for i := 1; i < len(ns); i++ {
		if ns[i] != (minorVersion{1, ns[i-1].Minor + 1}) {
			t.Errorf("sources.json skips from %v to %v: a removal between them would be dated wrong", ns[i-1], ns[i])
		}
	}
	for _, n := range ns {
		for p, v := range src.Minors[n.String()] {
			want := "v0." + strings.TrimPrefix(n.String(), "1.") + "."
			if p == "k8s.io/kubernetes" {
				want = "v" + n.String() + "."
			}
			if !strings.HasPrefix(v, want) {
				t.Errorf("%s reads %s@%s, not a %s release", n, p, v, n)
			}
		}
	}
	if _, err := parseSources([]byte(`{"minors": {"1.30": {"k8s.io/apiserver": "v0.30.0"}}}`)); err == nil {
		t.Error("a minor that does not read k8s.io/kubernetes was accepted")
	}
}
