package crd

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// FieldManager owns the fields of the CRD the agent applies, and nothing else: labels and
// annotations other managers (Argo CD, Flux, a person) set survive an apply.
const FieldManager = "upgradescope-agent"

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Apply server-side applies the ClusterReadiness manifest and waits until it is Established.
func Apply(ctx context.Context, dyn dynamic.Interface) error {
	return ApplyDefinition(ctx, dyn, Manifest, FieldManager)
}

// ApplyDefinition server-side applies a CustomResourceDefinition manifest as manager, and
// waits (10 s at most) until the API server serves it.
func ApplyDefinition(ctx context.Context, dyn dynamic.Interface, manifest []byte, manager string) error {
	var obj map[string]any
	if err := yaml.Unmarshal(manifest, &obj); err != nil {
		return fmt.Errorf("decode CRD manifest: %w", err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	data, err := crd.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	if _, err := dyn.Resource(crdResource).Patch(ctx, crd.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
		return fmt.Errorf("apply CRD %s: %w", crd.GetName(), err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
	}
	return nil
}
