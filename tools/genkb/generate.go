package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// entry is one group/version/kind's lifecycle as the rules read it.
type entry struct {
	Group       string   `json:"group"`
	Version     string   `json:"version"`
	Kind        string   `json:"kind"`
	Introduced  string   `json:"introduced,omitempty"`
	Deprecated  string   `json:"deprecated,omitempty"`
	Removed     string   `json:"removed,omitempty"`
	Replacement string   `json:"replacement,omitempty"`
	Resource    string   `json:"resource"`
	Stored      bool     `json:"stored"`
	Source      string   `json:"source"`
	Citations   []string `json:"citations"`
}

type lifecycle interface {
	APILifecycleIntroduced() (int, int)
}
type deprecated interface{ APILifecycleDeprecated() (int, int) }
type removed interface{ APILifecycleRemoved() (int, int) }
type replaced interface {
	APILifecycleReplacement() schema.GroupVersionKind
}

// notAnObject are kinds every group registers that are request or response envelopes.
var notAnObject = map[string]bool{
	"WatchEvent": true, "Status": true, "APIGroup": true, "APIGroupList": true,
	"APIVersions": true, "APIResourceList": true,
}

// neverStored are kinds that are request or response bodies: a client sends or receives
// them, but no object of the kind is ever stored, so removing the version breaks no object.
var neverStored = map[string]bool{
	"Scale": true, "DeploymentRollback": true, "Binding": true,
	"PodStatusResult": true, "EphemeralContainers": true, "RangeAllocation": true,
	"SerializedReference": true, "TokenRequest": true, "APIGroupDiscovery": true,
	"ComponentStatus":       true, // computed on read, never stored
	"APIGroupDiscoveryList": true,
}

func stored(gvk schema.GroupVersionKind) bool {
	// policy's Eviction is the pods/eviction subresource body; lifecycle.k8s.io's is a resource.
	if gvk.Group == "policy" && gvk.Kind == "Eviction" {
		return false
	}
	return !neverStored[gvk.Kind] && !strings.HasSuffix(gvk.Kind, "Review")
}

// resourceOf is the plural resource the apiserver serves a kind at, so metric rows
// (group/version/resource) find their kind. This is kubectl's own guess, which holds for
// every built-in kind.
func resourceOf(gvk schema.GroupVersionKind) string {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// Key is how rules look an entry up: `<group or core>/<version>/<Kind>`.
func Key(group, version, kind string) string {
	if group == "" {
		group = "core"
	}
	return group + "/" + version + "/" + kind
}

func generate() (map[string]entry, error) {
	s := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("register k8s.io/api types: %w", err)
		}
	}
	apis := map[string]entry{}
	for gvk, typ := range s.AllKnownTypes() {
		if skipKind(gvk) {
			continue
		}
		obj, ok := s.New(gvk)
		if ok != nil {
			return nil, fmt.Errorf("instantiate %v (%v): %w", gvk, typ, ok)
		}
		apis[Key(gvk.Group, gvk.Version, gvk.Kind)] = entryFor(gvk, obj)
	}
	return apis, nil
}

func skipKind(gvk schema.GroupVersionKind) bool {
	return gvk.Version == runtime.APIVersionInternal || notAnObject[gvk.Kind] ||
		strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options")
}

func entryFor(gvk schema.GroupVersionKind, obj runtime.Object) entry {
	e := entry{
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource:  resourceOf(gvk),
		Stored:    stored(gvk),
		Source:    "k8s.io/api",
		Citations: []string{deprecationGuide},
	}
	if o, ok := obj.(lifecycle); ok {
		e.Introduced = minor(o.APILifecycleIntroduced())
	}
	if o, ok := obj.(deprecated); ok {
		e.Deprecated = minor(o.APILifecycleDeprecated())
	}
	if o, ok := obj.(removed); ok {
		e.Removed = minor(o.APILifecycleRemoved())
	}
	if o, ok := obj.(replaced); ok {
		if r := replacementOf(gvk, o.APILifecycleReplacement()); r.Kind != "" {
			e.Replacement = Key(r.Group, r.Version, r.Kind)
		}
	}
	return e
}

// replacementOf is the kind that replaces gvk, as its prerelease-lifecycle-gen replacement
// tag says, with one upstream slip mended: an object is replaced by an object, never by a
// list. k8s.io/api networking/v1beta1/types.go tags IngressClass (not only IngressClassList)
// with "replacement=networking.k8s.io,v1,IngressClassList", which would send `fix` to a kind
// no manifest can hold.
func replacementOf(gvk, r schema.GroupVersionKind) schema.GroupVersionKind {
	if strings.HasSuffix(r.Kind, "List") && !strings.HasSuffix(gvk.Kind, "List") {
		r.Kind = strings.TrimSuffix(r.Kind, "List")
	}
	return r
}

// minor renders a generated (major, minor) pair; zero means the method says nothing.
func minor(major, minor int) string {
	if major == 0 && minor == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

type supplementFile struct {
	Comment string `json:"comment"`
	Entries []struct {
		Group       string                   `json:"group"`
		Version     string                   `json:"version"`
		Kind        string                   `json:"kind"`
		Introduced  string                   `json:"introduced"`
		Deprecated  string                   `json:"deprecated"`
		Removed     string                   `json:"removed"`
		Replacement *schema.GroupVersionKind `json:"replacement"`
		Citations   []string                 `json:"citations"`
	} `json:"entries"`
}

// mergeSupplement adds cited entries for deleted types; generated data wins where both exist.
func mergeSupplement(apis map[string]entry, data []byte) error {
	var f supplementFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("read supplement.json: %w", err)
	}
	for i, s := range f.Entries {
		if len(s.Citations) == 0 {
			return fmt.Errorf("supplement.json: entries[%d] (%s/%s %s) has no citation", i, s.Group, s.Version, s.Kind)
		}
		key := Key(s.Group, s.Version, s.Kind)
		if _, ok := apis[key]; ok {
			continue
		}
		e := entry{
			Group: s.Group, Version: s.Version, Kind: s.Kind,
			Resource:   resourceOf(schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}),
			Introduced: s.Introduced, Deprecated: s.Deprecated, Removed: s.Removed,
			Stored: true, Source: "cited", Citations: s.Citations,
		}
		if s.Replacement != nil {
			e.Replacement = Key(s.Replacement.Group, s.Replacement.Version, s.Replacement.Kind)
		}
		apis[key] = e
	}
	return nil
}
