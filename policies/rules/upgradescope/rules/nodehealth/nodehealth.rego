# METADATA
# title: Node health
# description: |
#   Nodes that are not Ready, cordoned or under pressure before the upgrade starts
#   (input.inventory.preflight.nodeState). Live only: without node state there is no
#   finding, and the report shows the node-state gap.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/node/node-status/#condition
# custom:
#   category: node-health
package upgradescope.rules.nodehealth

import data.upgradescope.lib.preflight

node_status := "https://kubernetes.io/docs/reference/node/node-status/#condition"

nodes := input.inventory.preflight.nodeState

# METADATA
# title: Nodes that are not Ready
# description: |
#   kubeadm upgrade apply checks that all nodes are Ready before it upgrades the control
#   plane, and refuses NotReady control-plane nodes. A node that is not Ready cannot be
#   drained cleanly (its kubelet does not confirm that its pods stopped) nor checked on the
#   new version; a managed node upgrade waits for nodes to become Ready.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/#how-it-works
#   - ref: https://kubernetes.io/docs/reference/node/node-status/#condition
#   - ref: https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
# custom:
#   families:
#     - id: node-not-ready
#       title: Nodes that are not Ready
#       category: node-health
#       reads: [preflight.nodeState.notReady]
#       capabilities: [node-state]
#       modes: [cluster]
#       severity: "blocker when preflight.nodeState.notReady.count > 0 (Ready False or Unknown)"
#       citations:
#         - https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/#how-it-works
#         - https://kubernetes.io/docs/reference/node/node-status/#condition
#         - https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
findings contains f if {
	names := nodes.notReady
	names.count > 0
	some t in input.targets
	f := node_finding("not-ready", "blocker", t, names, sprintf("%s not Ready", [nodes_phrase(names.count)]), {
		"detail": concat(" ", [
			"kubeadm upgrade apply checks that all nodes are Ready before it upgrades the control plane, and refuses a",
			"NotReady control-plane node. A node that is not Ready cannot be drained cleanly (its kubelet does not confirm",
			"that its pods stopped) nor checked on the new version, and a managed node upgrade waits for its nodes to be Ready.",
		]),
		"remediation": "Repair these nodes (kubelet, container runtime, network) or remove them from the cluster (kubectl delete node) before the upgrade.",
		"citations": [
			"https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/#how-it-works",
			node_status,
			"https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html",
		],
	})
}

# METADATA
# title: Cordoned nodes
# description: |
#   A cordoned node takes no new pods: it is capacity the drains of the upgrade cannot use,
#   and often a drain or a previous upgrade left half done.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/node/node-status/#condition
#   - ref: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
# custom:
#   families:
#     - id: node-cordoned
#       title: Cordoned nodes
#       category: node-health
#       reads: [preflight.nodeState.cordoned]
#       capabilities: [node-state]
#       modes: [cluster]
#       severity: "warning when preflight.nodeState.cordoned.count > 0 (spec.unschedulable)"
#       citations:
#         - https://kubernetes.io/docs/reference/node/node-status/#condition
#         - https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
findings contains f if {
	names := nodes.cordoned
	names.count > 0
	some t in input.targets
	f := node_finding("cordoned", "warning", t, names, sprintf("%s cordoned", [nodes_phrase(names.count)]), {
		"detail": concat(" ", [
			"A cordoned node (spec.unschedulable) takes no new pods, so the pods evicted by the upgrade's drains cannot use it;",
			"a node left cordoned is often a drain or a previous upgrade that did not finish.",
		]),
		"remediation": "Finish what cordoned these nodes and uncordon them (kubectl uncordon), or remove them, before the upgrade.",
		"citations": [node_status, "https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/"],
	})
}

# METADATA
# title: Nodes under pressure
# description: |
#   A node with MemoryPressure, DiskPressure or PIDPressure (or NetworkUnavailable) is
#   tainted NoSchedule by the node controller, so pods evicted by the upgrade's drains cannot
#   land on it, and under memory or disk pressure the kubelet evicts pods itself; on EKS a new
#   node under pressure fails to become Ready and fails the node group update.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-nodes-by-condition
#   - ref: https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
#   - ref: https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
# custom:
#   families:
#     - id: node-pressure
#       title: Nodes under pressure
#       category: node-health
#       reads: [preflight.nodeState.pressure]
#       capabilities: [node-state]
#       modes: [cluster]
#       severity: >-
#         warning for each condition (MemoryPressure, DiskPressure, PIDPressure,
#         NetworkUnavailable) True on at least one node
#       citations:
#         - https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-nodes-by-condition
#         - https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/
#         - https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
findings contains f if {
	some p in object.get(nodes, "pressure", [])
	p.nodes.count > 0
	some t in input.targets
	title := sprintf("%s on %s", [p.condition, lower_phrase(p.nodes.count)])
	f := node_finding(sprintf("pressure/%s", [p.condition]), "warning", t, p.nodes, title, {
		"detail": concat(" ", [
			sprintf("With %s the node controller taints these nodes NoSchedule, so pods evicted by the upgrade's drains", [p.condition]),
			"cannot land on them; under memory or disk pressure the kubelet evicts pods itself, and a new node under pressure",
			"may not become Ready (on EKS that fails the node group update).",
		]),
		"remediation": "Relieve the pressure (free disk or memory, stop runaway processes, fix the network plugin) or replace these nodes before the upgrade.",
		"citations": [
			"https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-nodes-by-condition",
			"https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/",
			"https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html",
		],
	})
}

node_finding(id, severity, t, names, title, text) := object.union(
	{
		"key": sprintf("node-health/%s", [id]),
		"category": "node-health",
		"severity": severity,
		"target": t,
		"title": sprintf("%s: %s", [title, preflight.named(object.get(names, "names", []), omitted(names))]),
		"detail": text.detail,
		"remediation": text.remediation,
		"objects": [{"kind": "Node", "name": n} | some n in object.get(names, "names", [])],
		"namespaces": [],
		"citations": text.citations,
	},
	preflight.omitted(omitted(names)),
)

# How many nodes are counted and not named.
omitted(names) := names.count - count(object.get(names, "names", []))

nodes_phrase(1) := "1 node is"

nodes_phrase(n) := sprintf("%d nodes are", [n]) if n != 1

lower_phrase(1) := "1 node"

lower_phrase(n) := sprintf("%d nodes", [n]) if n != 1
