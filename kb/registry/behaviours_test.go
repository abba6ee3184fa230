package registry

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/upgradescope/upgradescope/kb/probe"
)

const goodBehaviour = `id: demo
title: "Workloads mount the demo socket"
probe:
  id: host-paths
  podTemplate: true
  path: spec.volumes[*].hostPath.path
  values: true
  equals: [/run/demo.sock]
deprecated: {version: "1.20", citations: [https://example.com/deprecated]}
removed: {version: "1.24", citations: [https://example.com/removed]}
detail: "The demo socket is gone."
remediation: "Stop mounting it."
`

const goodNodeBehaviour = `id: demo
title: "Nodes run demo"
nodeRuntime: demo
removed: {version: "1.24", citations: [https://example.com/removed]}
detail: "d"
remediation: "r"
`

func behaviours(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys["behaviours/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}

func TestTheShippedBehavioursValidate(t *testing.T) {
	entries, err := LoadBehaviours(BehaviourFiles)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := entries["docker-socket"]
	if !ok || b.Removed == nil || b.Removed.Version != "1.24" {
		t.Errorf("docker-socket = %+v, want it removed in 1.24", b)
	}
}

func TestAValidBehaviourLoadsWithItsProbe(t *testing.T) {
	entries, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": goodBehaviour}))
	if err != nil {
		t.Fatal(err)
	}
	got := entries["demo"].Probe.Spec()
	want := probe.Spec{ID: "host-paths", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true, Equals: []string{"/run/demo.sock"}}
	if !probe.Equal(got, want) {
		t.Errorf("probe = %+v, want %+v", got, want)
	}
}

func TestInvalidBehavioursAreRefusedNamingFileAndField(t *testing.T) {
	tests := map[string]struct{ yaml, want string }{
		"an unknown field": {goodBehaviour + "since: 1.20\n", "behaviours/demo.yaml: unmarshal errors:\n  line 13: field since not found"},
		"an uncited removal": {strings.Replace(goodBehaviour, "citations: [https://example.com/removed]", "citations: []", 1),
			"behaviours/demo.yaml: removed.citations: at least one citation URL is required"},
		"a citation that is no https URL": {strings.Replace(goodBehaviour, "https://example.com/deprecated", "http://example.com/deprecated", 1),
			`behaviours/demo.yaml: deprecated.citations[0]: "http://example.com/deprecated" is not an https URL`},
		"a version with a patch": {strings.Replace(goodBehaviour, `version: "1.24"`, `version: "1.24.0"`, 1),
			`behaviours/demo.yaml: removed.version: "1.24.0" is not a Kubernetes minor such as 1.24`},
		"a removal before the deprecation": {strings.Replace(goodBehaviour, `version: "1.24"`, `version: "1.19"`, 1),
			"behaviours/demo.yaml: removed.version: 1.19 is before deprecated.version 1.20"},
		"no claim at all": {strings.Replace(strings.Replace(goodBehaviour, "deprecated: {version: \"1.20\", citations: [https://example.com/deprecated]}\n", "", 1),
			"removed: {version: \"1.24\", citations: [https://example.com/removed]}\n", "", 1),
			"behaviours/demo.yaml: deprecated: at least one of deprecated and removed is required"},
		"a probe the probe package refuses": {strings.Replace(goodBehaviour, "spec.volumes[*].hostPath.path", "spec.volumes[0].hostPath", 1),
			`behaviours/demo.yaml: probe: probe host-paths: path "spec.volumes[0].hostPath"`},
		"neither probe nor node runtime": {strings.Replace(goodNodeBehaviour, "nodeRuntime: demo\n", "", 1),
			"behaviours/demo.yaml: probe: give a probe or a nodeRuntime"},
		"both probe and node runtime": {goodBehaviour + "nodeRuntime: docker\n",
			"behaviours/demo.yaml: probe: give a probe or a nodeRuntime, not both"},
		"an unless value that is also an equals one": {strings.Replace(goodBehaviour, "  equals: [/run/demo.sock]\n", "  equals: [/run/demo.sock]\n  unless: [/run/demo.sock]\n", 1),
			`behaviours/demo.yaml: probe: probe host-paths: unless: "/run/demo.sock" is also in equals`},
		"a value filter on an absent-mode probe": {strings.Replace(goodBehaviour, "  values: true\n", "  match: absent\n", 1),
			"behaviours/demo.yaml: probe: probe host-paths: equals, prefixes, unless and strictInvalid filter found values"},
		"a node runtime without a removal": {strings.Replace(goodNodeBehaviour, "removed:", "deprecated:", 1),
			"behaviours/demo.yaml: removed: required with nodeRuntime"},
		"a runtime version bound without a runtime": {goodBehaviour + "runtimeBefore: \"2.0\"\n",
			"behaviours/demo.yaml: runtimeBefore: only with nodeRuntime"},
		"a runtime version bound that is no version": {goodNodeBehaviour + "runtimeBefore: v2\n",
			`behaviours/demo.yaml: runtimeBefore: "v2" is not a runtime version such as 2.0`},
		"an unsupported claim after the removal": {goodBehaviour + "unsupported: {version: \"1.25\", citations: [https://example.com/u]}\n",
			"behaviours/demo.yaml: removed.version: 1.24 is before unsupported.version 1.25"},
		"an unsupported claim before the deprecation": {goodBehaviour + "unsupported: {version: \"1.19\", citations: [https://example.com/u]}\n",
			"behaviours/demo.yaml: unsupported.version: 1.19 is before deprecated.version 1.20"},
		"an uncited unsupported claim": {goodBehaviour + "unsupported: {version: \"1.22\", citations: []}\n",
			"behaviours/demo.yaml: unsupported.citations: at least one citation URL is required"},
		"an unsupported claim without a removal": {strings.Replace(goodBehaviour, "removed: {version: \"1.24\", citations: [https://example.com/removed]}\n",
			"unsupported: {version: \"1.22\", citations: [https://example.com/u]}\n", 1),
			"behaviours/demo.yaml: unsupported: only with removed"},
		"a severity cap that is no severity": {goodBehaviour + "maxSeverity: low\n",
			`behaviours/demo.yaml: maxSeverity: "low" is not one of info, warning, blocker`},
		"a live cap above the cap": {goodBehaviour + "maxSeverity: warning\nliveMaxSeverity: blocker\n",
			"behaviours/demo.yaml: liveMaxSeverity: blocker caps nothing under maxSeverity warning"},
		"an id that is not the file name": {strings.Replace(goodBehaviour, "id: demo", "id: other", 1),
			`behaviours/demo.yaml: id: "other" must match the file name "demo"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": tt.yaml}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadBehaviours = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestABehaviourMayBoundARuntimesVersionAndCapItsSeverity(t *testing.T) {
	yaml := goodNodeBehaviour + "runtimeBefore: \"2.0\"\nunsupported: {version: \"1.22\", citations: [https://example.com/u]}\n" +
		"deprecated: {version: \"1.20\", citations: [https://example.com/d]}\nmaxSeverity: warning\nliveMaxSeverity: info\n"
	entries, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": yaml}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(CompileBehaviours(entries)["demo"])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"runtimeBefore":"2.0"`, `"unsupported":{"version":"1.22"`, `"maxSeverity":"warning"`, `"liveMaxSeverity":"info"`,
		`"citations":["https://example.com/d","https://example.com/u","https://example.com/removed"]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("compiled = %s, want it to contain %s", b, want)
		}
	}
}

func TestEntriesMayShareAProbeOnlyWhenTheyDeclareItAlike(t *testing.T) {
	alike := strings.Replace(goodBehaviour, "id: demo", "id: other", 1)
	if _, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": goodBehaviour, "other.yaml": alike})); err != nil {
		t.Errorf("two entries declaring one probe alike: %v", err)
	}
	differently := strings.Replace(alike, "hostPath.path", "hostPath.type", 1)
	_, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": goodBehaviour, "other.yaml": differently}))
	want := "behaviours/other.yaml: probe: host-paths is declared differently in behaviours/demo.yaml"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("LoadBehaviours = %v, want an error containing %q", err, want)
	}
}

func TestCompiledBehavioursNameTheirObservationAndKeepEveryCitation(t *testing.T) {
	entries, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": goodBehaviour, "nodes.yaml": strings.Replace(goodNodeBehaviour, "id: demo", "id: nodes", 1)}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(CompileBehaviours(entries))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"probe":"kb/host-paths"`,
		`"citations":["https://example.com/deprecated","https://example.com/removed"]`,
		`"removed":{"version":"1.24","citations":["https://example.com/removed"]}`,
		`"nodeRuntime":"demo"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("compiled = %s, want it to contain %s", b, want)
		}
	}
}

func TestTheDeclaredProbesAreListedOnceByIDWithTheirMatchSpelledOut(t *testing.T) {
	other := strings.Replace(goodBehaviour, "id: demo", "id: other", 1)
	entries, err := LoadBehaviours(behaviours(map[string]string{"demo.yaml": goodBehaviour, "other.yaml": other}))
	if err != nil {
		t.Fatal(err)
	}
	got := BehaviourProbes(entries)
	if len(got) != 1 || got[0].ID != "host-paths" || got[0].Match != probe.MatchPresent {
		t.Errorf("probes = %+v, want host-paths once, match present", got)
	}
}
