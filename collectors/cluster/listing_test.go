package cluster

import (
	"context"
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestListPagesAsksForPageSizeAndFollowsEveryContinueTokenToTheLastPage(t *testing.T) {
	pages := map[string]metav1.PartialObjectMetadataList{
		"":       {ListMeta: metav1.ListMeta{Continue: "page-2"}, Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}},
		"page-2": {ListMeta: metav1.ListMeta{Continue: "page-3"}, Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "b"}}}},
		"page-3": {Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "c"}}}},
	}
	var asked, seen []string
	list := func(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
		if opts.Limit != PageSize {
			t.Errorf("asked for %d objects a page, want %d", opts.Limit, PageSize)
		}
		asked = append(asked, opts.Continue)
		page := pages[opts.Continue]
		return &page, nil
	}
	err := listPages(context.Background(), list, func(page *metav1.PartialObjectMetadataList) {
		for _, o := range page.Items {
			seen = append(seen, o.Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "page-2", "page-3"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("continue tokens sent %q, want %q", asked, want)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("objects handed over %q, want %q", seen, want)
	}
}

func TestListPagesStopsAtTheFirstErrorAfterHandingOverTheEarlierPages(t *testing.T) {
	boom := errors.New("the connection was reset")
	calls, handed := 0, 0
	list := func(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
		calls++
		if opts.Continue != "" {
			return nil, boom
		}
		return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{Continue: "next"}}, nil
	}
	err := listPages(context.Background(), list, func(*metav1.PartialObjectMetadataList) { handed++ })
	if !errors.Is(err, boom) || calls != 2 || handed != 1 {
		t.Errorf("err %v after %d requests and %d pages handed over; want %v after 2 and 1", err, calls, handed, boom)
	}
}
