package cluster

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestABudgetHoldsABoundedNumberOfPodNamesWhileMatching(t *testing.T) {
	tests := []struct {
		name string
		pods int
	}{
		{"fewer pods than the bound are all named", inventory.MaxPreflightNames - 1},
		{"as many pods as the bound are all named", inventory.MaxPreflightNames},
		{"ten times the bound names the first and counts the rest", 10 * inventory.MaxPreflightNames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudgets()
			for i := range 3 {
				u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"selector": map[string]any{}}}}
				u.SetNamespace("shop")
				u.SetName(fmt.Sprintf("pdb-%d", i))
				b.add(u)
			}
			var all []string
			held := 0
			for i := range tt.pods {
				name := fmt.Sprintf("pod-%05d", tt.pods-i) // in reverse: the first kept are not the first seen
				all = append(all, name)
				b.match(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
				for _, bud := range b.byKey {
					held = max(held, len(bud.pods.names))
				}
			}
			if held > 2*inventory.MaxPreflightNames {
				t.Errorf("a budget held %d names while matching, want at most %d", held, 2*inventory.MaxPreflightNames)
			}
			sec := &inventory.Preflight{}
			for i := range 3 {
				sec.DisruptionBudgets = append(sec.DisruptionBudgets, inventory.DisruptionBudget{Object: inventory.ObjectRef{Namespace: "shop", Name: fmt.Sprintf("pdb-%d", i)}})
			}
			b.fill(sec, true)
			want := nameList(all)
			for _, d := range sec.DisruptionBudgets {
				if !reflect.DeepEqual(d.Pods, want.Names) || d.PodsOmitted != want.NamesOmitted {
					t.Errorf("%s names %d pods from %v, %d omitted; want %d from %v, %d omitted",
						d.Object.Name, len(d.Pods), first(d.Pods), d.PodsOmitted, len(want.Names), first(want.Names), want.NamesOmitted)
				}
			}
		})
	}
}

func first(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func TestKubeletConfigIsPartialWhenFewerNodesWereReadThanExist(t *testing.T) {
	tests := []struct {
		name        string
		read, all   int
		skipped     []string
		available   bool
		partial     bool
		wantsReason string
	}{
		{"every node read is complete", 3, 3, nil, true, false, "read 3 of 3 node(s)"},
		{"one node per kubelet version of many is partial", 2, 40, nil, true, true, "read 2 of 40 node(s), one per kubelet version and OS image"},
		{"a node that did not answer is partial", 1, 2, []string{"b: timed out"}, true, true, "1 did not answer"},
		{"no node answering is not available", 0, 2, []string{"a: refused", "b: refused"}, false, false, "no kubelet answered configz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := configzRead(tt.read, tt.all, tt.skipped)
			if got.Available != tt.available || got.Partial != tt.partial || !strings.Contains(got.Reason, tt.wantsReason) {
				t.Errorf("got %+v, want available %v, partial %v, reason holding %q", got, tt.available, tt.partial, tt.wantsReason)
			}
		})
	}
}
