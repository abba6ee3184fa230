package cluster

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/preflight"
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

// A list the recorder cut at its bound makes the capability partial, but for budgets whose
// cut ones all allowed a disruption.
func TestALivePreflightListPastItsBoundMakesItsCapabilityPartial(t *testing.T) {
	over := inventory.MaxPreflightItems + 1
	budget := func(p *preflightPass, name string, allowed int64, observed bool) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
			"spec":   map[string]any{"maxUnavailable": int64(1), "selector": map[string]any{}},
			"status": map[string]any{"disruptionsAllowed": allowed, "currentHealthy": int64(2), "desiredHealthy": int64(1), "expectedPods": int64(2)},
		}}
		u.SetNamespace("shop")
		u.SetName(name)
		u.SetGeneration(2)
		if observed {
			u.Object["status"].(map[string]any)["observedGeneration"] = int64(2)
		}
		p.budget(u)
	}
	object := func(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	tests := []struct {
		name       string
		capability string
		fill       func(p *preflightPass)
		partial    bool
		reason     string
	}{
		{"budgets all allowing a disruption past the bound stay whole", inventory.CapDisruptionBudgets, func(p *preflightPass) {
			for i := range over {
				budget(p, fmt.Sprintf("b-%04d", i), 1, true)
			}
		}, false, "1 PodDisruptionBudget(s) past the 1000 an inventory lists, all allowing a disruption"},
		{"a budget allowing no disruption is kept and those cut allowed one", inventory.CapDisruptionBudgets, func(p *preflightPass) {
			for i := range over - 1 {
				budget(p, fmt.Sprintf("b-%04d", i), 1, true)
			}
			budget(p, "zz-blocks", 0, true)
		}, false, "all allowing a disruption"},
		{"budgets allowing no disruption past the bound are partial", inventory.CapDisruptionBudgets, func(p *preflightPass) {
			for i := range over {
				budget(p, fmt.Sprintf("b-%04d", i), 0, true)
			}
		}, true, "1 PodDisruptionBudget(s), 1 of them allowing no disruption or not yet judged, past the 1000"},
		{"budgets the controller has not judged past the bound are partial", inventory.CapDisruptionBudgets, func(p *preflightPass) {
			for i := range over {
				budget(p, fmt.Sprintf("b-%04d", i), 1, false)
			}
		}, true, "not yet judged, past the 1000"},
		{"webhooks past the bound are partial", inventory.CapWebhooks, func(p *preflightPass) {
			var hooks []any
			for i := range over {
				hooks = append(hooks, map[string]any{"name": fmt.Sprintf("w%04d.example.com", i),
					"clientConfig": map[string]any{"service": map[string]any{"namespace": "a", "name": "b"}}})
			}
			p.observe(object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "many", map[string]any{"webhooks": hooks}), "ValidatingWebhookConfiguration")
		}, true, "1 webhook(s) past the 1000 an inventory lists"},
		{"APIServices past the bound are partial", inventory.CapAPIServices, func(p *preflightPass) {
			for i := range over {
				p.observe(object("apiregistration.k8s.io/v1", "APIService", fmt.Sprintf("v1.g%04d.example.com", i), map[string]any{
					"spec": map[string]any{"group": fmt.Sprintf("g%04d.example.com", i), "version": "v1", "service": map[string]any{"namespace": "a", "name": "b"}},
				}), "APIService")
			}
		}, true, "1 APIService(s) past the 1000 an inventory lists"},
		{"conversion webhooks past the bound make crds partial", inventory.CapCRDs, func(p *preflightPass) {
			for i := range over {
				crd := &apiextv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r%04d.example.com", i)},
					Spec: apiextv1.CustomResourceDefinitionSpec{Group: "example.com", Names: apiextv1.CustomResourceDefinitionNames{Kind: "R"},
						Conversion: &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
							ClientConfig: &apiextv1.WebhookClientConfig{Service: &apiextv1.ServiceReference{Namespace: "a", Name: "b"}}}}}}
				p.conversion(crd)
			}
		}, true, "1 CRD conversion webhook(s) past the 1000 an inventory lists"},
		{"component configurations past the bound are partial", inventory.CapComponentFlags, func(p *preflightPass) {
			var pods []corev1.Pod
			for i := range over {
				pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: fmt.Sprintf("kube-apiserver-%04d", i)},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-apiserver", Command: []string{"kube-apiserver", fmt.Sprintf("--v=%d", i)}}}}})
			}
			p.kubeSystem(nil, pods, nil)
		}, true, "1 component configuration(s) past the 1000 an inventory lists"},
		{"a list within its bound stays whole", inventory.CapWebhooks, func(p *preflightPass) {
			p.observe(object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "one", map[string]any{"webhooks": []any{map[string]any{"name": "w.example.com"}}}), "ValidatingWebhookConfiguration")
		}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &preflightPass{rec: preflight.NewRecorder(), budgets: newBudgets(), counts: map[string]int{}}
			tt.fill(p)
			doc := &inventory.Document{Capabilities: map[string]inventory.Capability{}}
			for _, c := range []string{inventory.CapDisruptionBudgets, inventory.CapWebhooks, inventory.CapAPIServices, inventory.CapCRDs, inventory.CapComponentFlags} {
				doc.Capabilities[c] = inventory.Capability{Available: true}
			}
			doc.Preflight = p.section(&Collector{})
			p.cuts(doc)
			got := doc.Capabilities[tt.capability]
			if !got.Available || got.Partial != tt.partial || !strings.Contains(got.Reason, tt.reason) || tt.reason == "" && got.Reason != "" {
				t.Errorf("%s = %+v, want available, partial %v, reason holding %q", tt.capability, got, tt.partial, tt.reason)
			}
		})
	}
}
