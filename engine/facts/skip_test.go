package facts

import (
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestACRDMayBeJudgedOnlyWithADeprecatedOrUnservedVersion(t *testing.T) {
	served := []inventory.CRDVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v1beta1", Served: false}}
	cases := []struct {
		name string
		crd  inventory.CRD
		want bool
	}{
		{"a CRD whose objects are all at served versions is not", inventory.CRD{Versions: served,
			StoredVersions: []string{"v1"}, Usage: []inventory.APIUsage{{Version: "v1", Count: 3}}}, false},
		{"a CRD with a deprecated version is", inventory.CRD{Versions: []inventory.CRDVersion{{Name: "v1", Served: true, Deprecated: true}}}, true},
		{"a CRD with objects used at a version it does not serve is", inventory.CRD{Versions: served,
			Usage: []inventory.APIUsage{{Version: "v1beta1", Count: 1}}}, true},
		{"a CRD storing a version it does not serve is", inventory.CRD{Versions: served,
			StoredVersions: []string{"v1", "v1beta1"}}, true},
		{"a CRD with objects at a version it does not declare is", inventory.CRD{Versions: served,
			Usage: []inventory.APIUsage{{Version: "v2", Count: 1}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := crdMayBeJudged(c.crd); got != c.want {
				t.Errorf("crdMayBeJudged = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAnAnnotationOnAnyObjectTheReportSuppressesIsFound(t *testing.T) {
	ignore := &inventory.IgnoreAnnotation{Rules: "removed-api", Reason: "migrating"}
	cases := []struct {
		name string
		inv  inventory.Document
		want bool
	}{
		{"no annotation anywhere", inventory.Document{APIUsage: []inventory.APIUsage{{Objects: []inventory.ObjectRef{{Name: "a"}}}}}, false},
		{"an API usage object", inventory.Document{APIUsage: []inventory.APIUsage{{Objects: []inventory.ObjectRef{{Name: "a"}, {Name: "b", Ignore: ignore}}}}}, true},
		{"a CRD usage object", inventory.Document{CRDs: []inventory.CRD{{Usage: []inventory.APIUsage{{Objects: []inventory.ObjectRef{{Name: "a", Ignore: ignore}}}}}}}, true},
		{"a probe object", inventory.Document{Probes: []inventory.Probe{{Objects: []inventory.ProbeObject{{Name: "a", Ignore: ignore}}}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := annotatedObjects(&c.inv); got != c.want {
				t.Errorf("annotatedObjects = %v, want %v", got, c.want)
			}
		})
	}
}
