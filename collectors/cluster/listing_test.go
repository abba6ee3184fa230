package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestListingVersionListsTheFlaggedKindNeverItsReplacementOfAnotherKind(t *testing.T) {
	gvk := func(g, v, k string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
	}
	servedAs := func(gvks ...schema.GroupVersionKind) map[schema.GroupVersionKind]served {
		m := map[schema.GroupVersionKind]served{}
		for _, g := range gvks {
			m[g] = served{gvr: g.GroupVersion().WithResource(g.Kind)}
		}
		return m
	}
	tests := []struct {
		name    string
		flagged []FlaggedKind
		served  map[schema.GroupVersionKind]served
		want    schema.GroupVersionKind
	}{
		{"a served replacement of the same kind is where objects are listed",
			[]FlaggedKind{{Group: "storage.k8s.io", Version: "v1beta1", Kind: "CSIStorageCapacity", Replacement: gvk("storage.k8s.io", "v1", "CSIStorageCapacity")}},
			servedAs(gvk("storage.k8s.io", "v1beta1", "CSIStorageCapacity"), gvk("storage.k8s.io", "v1", "CSIStorageCapacity")),
			gvk("storage.k8s.io", "v1", "CSIStorageCapacity")},
		{"a replacement of another kind is never listed for the flagged kind",
			[]FlaggedKind{{Group: "", Version: "v1", Kind: "Endpoints", Replacement: gvk("discovery.k8s.io", "v1", "EndpointSlice")}},
			servedAs(gvk("", "v1", "Endpoints"), gvk("discovery.k8s.io", "v1", "EndpointSlice")),
			gvk("", "v1", "Endpoints")},
		{"without a served replacement another unflagged version of the kind is used",
			[]FlaggedKind{{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Kind: "FlowSchema"}},
			servedAs(gvk("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema"), gvk("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema")),
			gvk("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := listingVersion(tt.flagged, tt.served)
			if want := tt.served[tt.want]; got != want {
				t.Errorf("listed at %v, want %v", got.gvr, want.gvr)
			}
		})
	}
}
