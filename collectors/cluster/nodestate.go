package cluster

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/upgradescope/upgradescope/inventory"
)

// pressureConditions are the node conditions that, True, say a node is under pressure: a
// drain's evictions land on the others.
var pressureConditions = []corev1.NodeConditionType{
	corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeNetworkUnavailable,
}

// nodeState is the nodes as a drain and the target's kubelet meet them: Ready (the Ready
// condition True; False, Unknown or absent is not ready), cordoned (spec.unschedulable),
// schedulable (Ready and not cordoned), the pressure conditions that are True, and the
// operating systems, kernels, runtimes and kubelets they run.
func nodeState(nodes []corev1.Node) *inventory.NodeState {
	state := &inventory.NodeState{Examined: len(nodes)}
	var notReady, cordoned []string
	pressure := map[corev1.NodeConditionType][]string{}
	type systemKey struct{ os, kernel, runtime, kubelet string }
	systems := map[systemKey][]string{}
	for i := range nodes {
		n := &nodes[i]
		ready := isReady(n)
		for _, c := range n.Status.Conditions {
			if c.Status == corev1.ConditionTrue && slices.Contains(pressureConditions, c.Type) {
				pressure[c.Type] = append(pressure[c.Type], n.Name)
			}
		}
		if !ready {
			notReady = append(notReady, n.Name)
		}
		if n.Spec.Unschedulable {
			cordoned = append(cordoned, n.Name)
		}
		if ready && !n.Spec.Unschedulable {
			state.Schedulable++
		}
		info := n.Status.NodeInfo
		k := systemKey{info.OSImage, info.KernelVersion, info.ContainerRuntimeVersion, info.KubeletVersion}
		systems[k] = append(systems[k], n.Name)
	}
	state.NotReady, state.Cordoned = nameList(notReady), nameList(cordoned)
	for _, c := range pressureConditions {
		if names := pressure[c]; len(names) > 0 {
			state.Pressure = append(state.Pressure, inventory.NodeCondition{Condition: string(c), Nodes: nameList(names)})
		}
	}
	for k, names := range systems {
		state.Systems = append(state.Systems, inventory.NodeSystem{
			OSImage: k.os, KernelVersion: k.kernel, ContainerRuntime: k.runtime, KubeletVersion: k.kubelet, Nodes: nameList(names),
		})
	}
	slices.SortFunc(state.Systems, func(a, b inventory.NodeSystem) int {
		return cmp.Or(cmp.Compare(a.OSImage, b.OSImage), cmp.Compare(a.KernelVersion, b.KernelVersion),
			cmp.Compare(a.ContainerRuntime, b.ContainerRuntime), cmp.Compare(a.KubeletVersion, b.KubeletVersion))
	})
	if len(state.Systems) > inventory.MaxPreflightItems {
		state.SystemsOmitted = len(state.Systems) - inventory.MaxPreflightItems
		state.Systems = state.Systems[:inventory.MaxPreflightItems]
	}
	return state
}

// nameList counts names and keeps the first MaxPreflightNames of them, sorted.
func nameList(names []string) inventory.NameList {
	list := inventory.NameList{Count: len(names)}
	if len(names) == 0 {
		return list
	}
	list.Names = slices.Sorted(slices.Values(names))
	if len(list.Names) > inventory.MaxPreflightNames {
		list.NamesOmitted = len(list.Names) - inventory.MaxPreflightNames
		list.Names = list.Names[:inventory.MaxPreflightNames]
	}
	return list
}

// configzSample picks the nodes whose kubelet configuration is read: one per kubelet version
// and OS image, the first Ready node by name of each, at most maxNodes groups in order.
// A node that is not Ready would not answer.
func configzSample(nodes []corev1.Node, maxNodes int) []string {
	type key struct{ kubelet, os string }
	first := map[key]string{}
	for i := range nodes {
		n := &nodes[i]
		if !isReady(n) {
			continue
		}
		k := key{n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.OSImage}
		if name, ok := first[k]; !ok || n.Name < name {
			first[k] = n.Name
		}
	}
	keys := make([]key, 0, len(first))
	for k := range first {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.kubelet, b.kubelet), cmp.Compare(a.os, b.os)) })
	out := make([]string, 0, min(len(keys), maxNodes))
	for _, k := range keys[:min(len(keys), maxNodes)] {
		out = append(out, first[k])
	}
	return out
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
