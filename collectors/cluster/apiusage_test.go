package cluster_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
)

var vacV1beta1 = cluster.FlaggedKind{
	Group: "storage.k8s.io", Version: "v1beta1", Kind: "VolumeAttributesClass",
	Replacement: schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttributesClass"},
}

func names(us []inventory.APIUsage, suffix string) []string {
	var out []string
	for _, u := range us {
		for _, o := range u.Objects {
			if len(o.Name) > len(suffix) && o.Name[len(o.Name)-len(suffix):] == suffix {
				out = append(out, u.Version+" "+o.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestAPIUsageCountsWritersNotResidents proves authorship on objects a real 1.35 server
// stored: only objects a writer still writes through v1beta1 count, wherever they are read.
func TestAPIUsageCountsWritersNotResidents(t *testing.T) {
	cfg := restConfig(t, envServer, "admin")
	c := adminClient(t, envServer)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sfx := fmt.Sprintf("-%d", time.Now().UnixNano()%1e6)
	params := map[string]string{"iops": "100"}
	cleanup := func(name string) {
		t.Cleanup(func() {
			_ = c.StorageV1().VolumeAttributesClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	beta := func(name, manager string) {
		_, err := c.StorageV1beta1().VolumeAttributesClasses().Create(ctx, &storagev1beta1.VolumeAttributesClass{
			ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "csi.example.com", Parameters: params,
		}, metav1.CreateOptions{FieldManager: manager})
		if err != nil {
			t.Fatal(err)
		}
		cleanup(name)
	}
	// 1. created through v1beta1 by a typed client (an Update entry): counts.
	beta("typed"+sfx, "legacy-controller")
	// 1b. written through v1beta1 only by the control plane (storage migration): does not count.
	beta("controlplane"+sfx, "kube-controller-manager")
	// 2. server-side applied at v1beta1 (an Apply entry): counts.
	applied := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass",
		"metadata": map[string]any{"name": "applied" + sfx}, "driverName": "csi.example.com", "parameters": map[string]any{"iops": "100"},
	}}
	gvr := schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1beta1", Resource: "volumeattributesclasses"}
	if _, err := dyn.Resource(gvr).Apply(ctx, "applied"+sfx, applied, metav1.ApplyOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	cleanup("applied" + sfx)
	// 3. created through v1beta1, then the same manager moved to v1: no longer counts.
	beta("migrated"+sfx, "migrating-controller")
	time.Sleep(1100 * time.Millisecond) // managedFields times have second resolution
	patch := []byte(`{"metadata":{"labels":{"moved":"yes"}}}`)
	if _, err := c.StorageV1().VolumeAttributesClasses().Patch(ctx, "migrated"+sfx, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "migrating-controller"}); err != nil {
		t.Fatal(err)
	}
	// 3b. created through v1beta1; later another manager updated it through v1: the
	// creator's last write was still v1beta1, so it counts.
	beta("shared"+sfx, "old-controller")
	if _, err := c.StorageV1().VolumeAttributesClasses().Patch(ctx, "shared"+sfx, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "new-controller"}); err != nil {
		t.Fatal(err)
	}
	// 4. written only through v1: never counts.
	if _, err := c.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "current" + sfx}, DriverName: "csi.example.com", Parameters: params,
	}, metav1.CreateOptions{FieldManager: "modern"}); err != nil {
		t.Fatal(err)
	}
	cleanup("current" + sfx)
	// 5. no managedFields left: the last-applied annotation decides, or nobody can tell.
	for name, lastApplied := range map[string]string{
		"annotated" + sfx: `{"apiVersion":"storage.k8s.io/v1beta1","kind":"VolumeAttributesClass"}`,
		"orphan" + sfx:    "",
	} {
		o := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "csi.example.com", Parameters: params}
		if lastApplied != "" {
			o.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}
		}
		created, err := c.StorageV1().VolumeAttributesClasses().Create(ctx, o, metav1.CreateOptions{FieldManager: "kubectl"})
		if err != nil {
			t.Fatal(err)
		}
		cleanup(name)
		created.ManagedFields = []metav1.ManagedFieldsEntry{{}} // the documented way to clear them
		if _, err := c.StorageV1().VolumeAttributesClasses().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	capability := col.APIUsage(ctx, &doc, []cluster.FlaggedKind{vacV1beta1})
	if !capability.Available || capability.Partial {
		t.Fatalf("api-usage = %+v", capability)
	}
	if got, want := names(doc.APIUsage, sfx), []string{"v1beta1 annotated" + sfx, "v1beta1 applied" + sfx, "v1beta1 shared" + sfx, "v1beta1 typed" + sfx}; !reflect.DeepEqual(got, want) {
		t.Errorf("written through v1beta1: %q, want %q", got, want)
	}
	if got, want := names(doc.APIAuthorshipUnknown, sfx), []string{"v1beta1 orphan" + sfx}; !reflect.DeepEqual(got, want) {
		t.Errorf("authorship unknown: %q, want %q", got, want)
	}
}

// TestAPIUsageOnTheEmulatedServerFindsAnAPIRemovedIn134 uses the 1.35 binary emulating 1.32,
// which still serves admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy.
func TestAPIUsageOnTheEmulatedServerFindsAnAPIRemovedIn134(t *testing.T) {
	cfg := restConfig(t, envEmulated, "admin")
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := fmt.Sprintf("legacy-policy-%d", time.Now().UnixNano()%1e6)
	gvr := kubetest.LegacyAdmissionPolicies
	policy := kubetest.LegacyAdmissionPolicy(name)
	if _, err := dyn.Resource(gvr).Create(ctx, policy, metav1.CreateOptions{FieldManager: "policy-bot"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })

	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	flagged := []cluster.FlaggedKind{{Group: "admissionregistration.k8s.io", Version: "v1beta1", Kind: "ValidatingAdmissionPolicy"}}
	if c := col.APIUsage(ctx, &doc, flagged); !c.Available || c.Partial {
		t.Fatalf("api-usage = %+v", c)
	}
	if got := names(doc.APIUsage, name[len("legacy-policy"):]); !reflect.DeepEqual(got, []string{"v1beta1 " + name}) {
		t.Errorf("usage = %q, want the v1beta1 policy", got)
	}
}

func TestAPIUsageForAViewerIsNotAssessed(t *testing.T) {
	col, err := cluster.New(restConfig(t, envServer, "viewer"))
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	c := col.APIUsage(context.Background(), &doc, []cluster.FlaggedKind{vacV1beta1})
	if c.Available && !c.Partial {
		t.Errorf("api-usage = %+v for a user who may read nothing; it must not look complete", c)
	}
}
