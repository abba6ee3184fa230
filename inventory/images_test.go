package inventory

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestImageReferencesSplitIntoRepositoryTagAndDigestAndSpellBack(t *testing.T) {
	tests := []struct{ ref, repository, tag, digest string }{
		{"nginx", "nginx", "", ""},
		{"nginx:1.25", "nginx", "1.25", ""},
		{"registry:5000/team/app", "registry:5000/team/app", "", ""},
		{"registry:5000/team/app:v2@sha256:00ff", "registry:5000/team/app", "v2", "sha256:00ff"},
		{"a/b@sha256:1", "a/b", "", "sha256:1"},
		{"weird:", "weird:", "", ""},       // would not spell back: kept whole
		{"@sha256:1", "@sha256:1", "", ""}, // no repository: kept whole
	}
	for _, tt := range tests {
		repo, tag, digest := SplitImage(tt.ref)
		if repo != tt.repository || tag != tt.tag || digest != tt.digest {
			t.Errorf("SplitImage(%q) = %q %q %q, want %q %q %q", tt.ref, repo, tag, digest, tt.repository, tt.tag, tt.digest)
		}
		w := WorkloadImage{Repository: repo}
		if got := w.Reference(ImageVersion{Tag: tag, Digest: digest}); got != tt.ref {
			t.Errorf("Reference of %q = %q", tt.ref, got)
		}
	}
}

func TestAnImageSetGroupsVersionsByRepositoryAndObservesOnlyWhatTheWatchAsks(t *testing.T) {
	s := NewImageSet(ImageWatch{Segments: map[string]bool{"ingress-nginx": true}, Names: map[string]bool{}})
	ref := func(name string) *ObjectRef { return &ObjectRef{Namespace: "web", Name: name, File: "f.yaml", Line: 1} }
	s.Add("shop/api:1.1", "web", map[string]string{NameLabel: "api"}, ref("api"))
	s.Add("shop/api:1.0", "web", map[string]string{NameLabel: "api"}, ref("api-old"))
	s.Add("shop/api:1.0", "canary", nil, ref("api-canary"))
	s.Add("registry.k8s.io/ingress-nginx/controller:v1.9.4", "edge", map[string]string{NameLabel: "ingress-nginx"}, ref("nginx"))
	want := []WorkloadImage{
		{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{{
			Tag: "v1.9.4", Namespaces: []string{"edge"}, LabelSets: []map[string]string{{NameLabel: "ingress-nginx"}}, Objects: []ObjectRef{*ref("nginx")},
		}}},
		{Repository: "shop/api", Versions: []ImageVersion{
			{Tag: "1.0", Namespaces: []string{"canary", "web"}},
			{Tag: "1.1", Namespaces: []string{"web"}},
		}},
	}
	if got := s.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("List() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestTheZeroImageWatchObservesEveryImage(t *testing.T) {
	if !(ImageWatch{}).Observes("registry.example.com/anything", nil) {
		t.Error("the zero watch must observe every image")
	}
}

func TestAnImageSetListsAtMostMaxListedImagesUnobservedVersionsTheFirstByReference(t *testing.T) {
	s := NewImageSet(ImageWatch{Segments: map[string]bool{"ingress-nginx": true}, Names: map[string]bool{}})
	n := MaxListedImages + 5
	for i := n - 1; i >= 0; i-- { // the largest first: each later one pushes one out
		s.Add(fmt.Sprintf("registry.example.com/svc-%05d:1", i), "web", nil, nil)
		s.Add(fmt.Sprintf("registry.example.com/svc-%05d:1", i), "web", nil, nil)
	}
	s.Add("registry.k8s.io/ingress-nginx/controller:v1.9.4", "edge", nil, nil)
	list := s.List()
	if len(list) != MaxListedImages+1 || list[0].Repository != "registry.example.com/svc-00000" ||
		list[MaxListedImages-1].Repository != fmt.Sprintf("registry.example.com/svc-%05d", MaxListedImages-1) ||
		list[MaxListedImages].Repository != "registry.k8s.io/ingress-nginx/controller" {
		t.Errorf("listed %d repositories, first %q, last %q", len(list), list[0].Repository, list[len(list)-1].Repository)
	}
	if s.Omitted() != 10 {
		t.Errorf("omitted = %d sightings, want 10 (5 versions seen twice)", s.Omitted())
	}
}

// One image run in more namespaces than an image version names: the first MaxImageNamespaces
// are named, the sightings in the rest counted, and the document stays schema-valid.
func TestAnImageInMoreNamespacesThanTheBoundNamesTheFirstAndCountsTheRest(t *testing.T) {
	s := NewImageSet(ImageWatch{})
	const sightings = MaxImageNamespaces + 40
	for i := range sightings {
		s.Add("registry.example.com/app:1.0", fmt.Sprintf("ns-%d", i), nil, nil)
	}
	s.Add("registry.example.com/app:1.0", "ns-0", nil, nil) // a named namespace again
	v := s.List()[0].Versions[0]
	if len(v.Namespaces) != MaxImageNamespaces || v.NamespacesOmitted != 40 {
		t.Errorf("%d namespaces named, %d omitted; want %d, 40", len(v.Namespaces), v.NamespacesOmitted, MaxImageNamespaces)
	}
	d := validDocument()
	d.WorkloadImages = s.List()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(data); err != nil {
		t.Errorf("an image version at its bound is refused: %v", err)
	}
}
