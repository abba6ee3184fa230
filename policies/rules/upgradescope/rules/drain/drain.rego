# METADATA
# title: Drain feasibility
# description: |
#   Whether the node drains of an upgrade can go through (input.inventory.preflight): budgets
#   that allow no eviction, pods kubectl drain refuses without --force or
#   --delete-emptydir-data, and workloads whose placement leaves an evicted pod no node. A
#   part the inventory does not hold has no finding here; the report turns the capability
#   that could not be read into a gap.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
#   - ref: https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go
# custom:
#   category: drain
package upgradescope.rules.drain

import data.upgradescope.lib.preflight

pdb_task := "https://kubernetes.io/docs/tasks/run-application/configure-pdb/"

safe_drain := "https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/"

eks_node_update := "https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html"

kubectl_filters := "https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go"

pre := object.get(input.inventory, "preflight", {})

live if input.inventory.source == "cluster"

# METADATA
# title: PodDisruptionBudgets that allow no disruption
# description: |
#   A drain evicts pods through the Eviction API, which refuses a pod while a budget that
#   selects it allows no disruption: kubectl drain retries until its timeout, and a managed
#   node upgrade fails (EKS: PodEvictionFailure after 15 minutes). A budget that allows none
#   even with every pod healthy stalls every drain of a node running its pods.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/run-application/configure-pdb/
#   - ref: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
#   - ref: https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
#   - ref: https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/pod-disruption-budget-v1/
# custom:
#   families:
#     - id: drain-pdb-no-disruption
#       title: PodDisruptionBudgets that allow no disruption
#       category: drain
#       reads: [preflight.disruptionBudgets]
#       capabilities: [disruption-budgets]
#       modes: [files, cluster]
#       severity: >-
#         Live (status present): blocker when status.disruptionsAllowed is 0 and the budget
#         would allow none even with every expected pod healthy (expectedPods > 0 and
#         desiredHealthy >= expectedPods: maxUnavailable 0, minAvailable 100% or at least the
#         replicas); warning when disruptionsAllowed is 0 only because pods are unhealthy
#         (desiredHealthy < expectedPods); nothing when the budget selects no pod. Without
#         status (files): blocker for maxUnavailable 0 or 0%, minAvailable 100%, or a
#         minAvailable that keeps every replica of the workloads the selector matches (their
#         replicas summed, rounding percentages up as the disruption controller does), unless
#         one of those workloads is autoscaled (an HPA or ScaledObject of the manifests scales
#         it, so its replicas are not the ones written).
#       citations:
#         - https://kubernetes.io/docs/tasks/run-application/configure-pdb/
#         - https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
#         - https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
#         - https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/pod-disruption-budget-v1/
findings contains f if {
	some i, j in judged
	b := budgets[i]
	some t in input.targets
	f := budget_finding(b, j, t)
}

# METADATA
# title: Pods no controller owns
# description: |
#   kubectl drain refuses a pod that declares no controller unless given --force, and then
#   deletes it: nothing recreates it on another node, so what it ran is gone until someone
#   creates it again. A managed node upgrade evicts it the same way.
# related_resources:
#   - ref: https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go
#   - ref: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
# custom:
#   families:
#     - id: drain-unreplicated-pods
#       title: Pods no controller owns
#       category: drain
#       reads: [preflight.drain.unreplicated]
#       capabilities: [pods]
#       modes: [files, cluster]
#       severity: "warning when preflight.drain.unreplicated.count > 0: the drain stops without --force, and --force deletes the pods for good"
#       citations:
#         - https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go
#         - https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
findings contains f if {
	pods := pre.drain.unreplicated
	pods.count > 0
	some t in input.targets
	f := pods_finding("unreplicated-pods", "warning", t, pods, unreplicated_text)
}

# METADATA
# title: Pods with emptyDir data
# description: |
#   kubectl drain refuses a pod with an emptyDir volume unless given
#   --delete-emptydir-data; the data goes with the pod. Managed node upgrades evict such pods
#   without asking, and emptyDir data is scratch by contract, deleted whenever the pod leaves
#   its node, so the drain stops only until the operator passes the flag.
# related_resources:
#   - ref: https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go
#   - ref: https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
#   - ref: https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
# custom:
#   families:
#     - id: drain-emptydir-data
#       title: Pods with emptyDir data
#       category: drain
#       reads: [preflight.drain.localStorage]
#       capabilities: [pods]
#       modes: [files, cluster]
#       severity: >-
#         info when preflight.drain.localStorage.count > 0: kubectl drain stops only until it
#         is given --delete-emptydir-data, managed node upgrades evict these pods through the
#         Eviction API without asking (EKS fails a node upgrade on eviction failures only), and
#         emptyDir data is deleted whenever a pod leaves its node
#       citations:
#         - https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go
#         - https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
#         - https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
findings contains f if {
	pods := pre.drain.localStorage
	pods.count > 0
	some t in input.targets
	f := pods_finding("emptydir-data", "info", t, pods, emptydir_text)
}

# METADATA
# title: Placements that leave an evicted pod no node
# description: |
#   A workload whose required pod anti-affinity (or DoNotSchedule topology spread with
#   maxSkew 1) on kubernetes.io/hostname needs a node per replica has no node left for a pod
#   evicted from a drained node when it runs at least as many replicas as there are
#   schedulable nodes: the pod stays Pending until a node frees, and the workload runs short
#   for the whole node replacement.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity
#   - ref: https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
# custom:
#   families:
#     - id: drain-placement-no-node
#       title: Placements that leave an evicted pod no node
#       category: drain
#       reads: [preflight.placements, preflight.nodeState.schedulable]
#       capabilities: [pods, node-state]
#       modes: [cluster]
#       severity: >-
#         warning when a placement's replicas >= preflight.nodeState.schedulable (and > 0);
#         never a blocker on its own: the Eviction API does not wait for the evicted pod to be
#         scheduled again, so the drain completes and the pod stays Pending until a node
#         frees (a surge upgrade adds one). When a budget also guards the workload, the next
#         drain stalls on that budget, which drain-pdb-no-disruption reports from its status.
#         Without node state (files mode) there is no finding.
#       citations:
#         - https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity
#         - https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
#         - https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
findings contains f if {
	nodes := pre.nodeState
	some p in object.get(pre, "placements", [])
	p.replicas > 0
	p.replicas >= nodes.schedulable
	some t in input.targets
	f := placement_finding(p, nodes.schedulable, t)
}

budgets := object.get(pre, "disruptionBudgets", [])

# METADATA
# description: |
#   The budgets that allow no disruption, by index: their severity and why. Live a budget's
#   status decides; without status (files) its spec does. The tests read fields in the rule
#   body, not through functions of the whole budget: OPA hashes a function's arguments, and a
#   large cluster has thousands of budgets, nearly all of them fine.
# scope: document
judged[i] := status_judgement(b.status) if {
	some i, b in budgets
	b.status.disruptionsAllowed == 0
}

# Without status: what the spec says, the first reason that holds. A policy/v1beta1 budget
# with an empty selector selects no pod.
judged[i] := {"severity": "blocker", "why": why} if {
	some i in spec_candidates
	b := budgets[i]
	not b.status
	not b.selectorEmpty
	why := spec_reason(
		object.get(b, "maxUnavailable", ""), object.get(b, "minAvailable", ""),
		object.get(b, "workloads", []), object.get(b, "workloadsOmitted", 0),
	)
}

# An empty selector selects every pod of the namespace in policy/v1 and none in v1beta1.
judged[i] := {"severity": "blocker", "why": why} if {
	some i in spec_candidates
	b := budgets[i]
	not b.status
	b.selectorEmpty
	b.apiVersion != "policy/v1beta1"
	why := spec_reason(
		object.get(b, "maxUnavailable", ""), object.get(b, "minAvailable", ""),
		object.get(b, "workloads", []), object.get(b, "workloadsOmitted", 0),
	)
}

status_judgement(s) := {"severity": "blocker", "why": why} if {
	s.expectedPods > 0
	s.desiredHealthy >= s.expectedPods
	why := sprintf("it needs %d of its %d pods healthy", [s.desiredHealthy, s.expectedPods])
}

status_judgement(s) := {"severity": "warning", "why": why} if {
	s.desiredHealthy < s.expectedPods
	unhealthy := s.expectedPods - s.currentHealthy
	why := sprintf("%d of its %d pods %s not healthy", [unhealthy, s.expectedPods, are(unhealthy)])
}

# The first reason the spec gives. It takes the fields, not the budget: a files inventory
# lists up to a thousand budgets, nearly all of them fine, and OPA hashes a function's
# arguments. minAvailable is judged against the replicas of the workloads the selector
# matches only when every one of them is listed and none is autoscaled: an autoscaler's
# replicas are not the ones written.
# The budgets whose spec can forbid every disruption: maxUnavailable set, minAvailable 100%,
# or workloads to count minAvailable against. Most budgets are none of these (minAvailable 1
# of workloads the manifests do not hold), and these tests are cheap beside spec_reason.
spec_candidates contains i if {
	some i, b in budgets
	b.maxUnavailable
}

spec_candidates contains i if {
	some i, b in budgets
	b.minAvailable == "100%"
}

spec_candidates contains i if {
	some i, b in budgets
	b.workloads
}

spec_reason(max_unavailable, min_available, workloads, omitted) := sprintf("maxUnavailable %s", [max_unavailable]) if {
	max_unavailable in {"0", "0%"}
} else := "minAvailable 100%" if {
	min_available == "100%"
} else := sprintf("minAvailable %s with %d replicas", [min_available, r]) if {
	min_available != ""
	omitted == 0
	count(workloads) > 0
	every w in workloads {
		not w.autoscaled
	}
	r := sum([w.replicas | some w in workloads])
	r > 0
	kept(min_available, r) >= r
}

# How many of r pods minAvailable keeps: a number as written, a percentage rounded up.
kept(v, r) := ceil((to_number(trim_suffix(v, "%")) * r) / 100) if endswith(v, "%")

kept(v, _) := to_number(v) if not endswith(v, "%")

budget_finding(b, j, t) := object.union(
	{
		"key": sprintf("drain/pdb-no-disruption/%s/%s", [b.object.namespace, b.object.name]),
		"category": "drain",
		"severity": j.severity,
		"target": t,
		"title": budget_title(b, j),
		"detail": budget_detail[j.severity],
		"remediation": budget_remediation[j.severity],
		"objects": array.concat([object.union({"kind": "PodDisruptionBudget"}, b.object)], guarded(b)),
		"namespaces": [b.object.namespace],
		"citations": [pdb_task, safe_drain, eks_node_update],
	},
	preflight.omitted(object.get(b, "podsOmitted", 0) + object.get(b, "workloadsOmitted", 0)),
)

budget_title(b, j) := sprintf("PodDisruptionBudget %s/%s allows no disruption: %s (%s)", [b.object.namespace, b.object.name, j.why, who]) if {
	who := guarded_phrase(b)
} else := sprintf("PodDisruptionBudget %s/%s allows no disruption: %s", [b.object.namespace, b.object.name, j.why])

# What the budget guards, as the title names it: its pods live, the workloads in files.
guarded_phrase(b) := sprintf("pods %s", [preflight.named(b.pods, object.get(b, "podsOmitted", 0))]) if {
	count(object.get(b, "pods", [])) > 0
} else := preflight.named(
	[sprintf("%s %s/%s", [w.object.kind, w.object.namespace, w.object.name]) | some w in b.workloads],
	object.get(b, "workloadsOmitted", 0),
) if {
	count(object.get(b, "workloads", [])) > 0
}

guarded(b) := array.concat(
	[{"kind": "Pod", "namespace": b.object.namespace, "name": p} | some p in object.get(b, "pods", [])],
	[w.object | some w in object.get(b, "workloads", [])],
)

budget_detail := {
	"blocker": concat(" ", [
		"A drain evicts pods through the Eviction API, which refuses to evict a pod this budget selects while it allows no disruption.",
		"Even with every pod healthy it allows none, so kubectl drain retries until it times out and a managed node upgrade fails",
		"(EKS: PodEvictionFailure after 15 minutes) on every node running one of these pods.",
	]),
	"warning": concat(" ", [
		"The budget would allow a disruption if its pods were healthy, but some are not, so the Eviction API refuses the healthy ones",
		"and the drain waits until they recover (with the default unhealthyPodEvictionPolicy IfHealthyBudget the running unhealthy ones",
		"cannot be evicted either). A replacement pod that never becomes ready keeps the drain waiting for good.",
	]),
}

budget_remediation := {
	"blocker": concat(" ", [
		"Allow at least one disruption before the upgrade: set maxUnavailable to 1 (or a percentage), or minAvailable below the",
		"replicas, or scale the workload up; or agree with its owners to delete the budget for the upgrade and recreate it after.",
	]),
	"warning": concat(" ", [
		"Make the pods Ready (or remove the broken ones) before the upgrade, or set unhealthyPodEvictionPolicy: AlwaysAllow on the",
		"budget so that pods which are running but not ready can be evicted.",
	]),
}

unreplicated_text := {
	"title": "Pods no controller owns (%s): kubectl drain refuses them without --force, which deletes them for good",
	"detail": concat(" ", [
		"kubectl drain refuses pods that declare no controller (\"cannot delete Pods that declare no controller (use --force to override)\").",
		"With --force, or evicted by a managed node upgrade, they are deleted and nothing recreates them on another node.",
	]),
	"remediation": concat(" ", [
		"Run them under a controller (a Deployment, StatefulSet or Job) before the upgrade, or plan to recreate them after their node",
		"is drained with --force.",
	]),
}

emptydir_text := {
	"title": "Pods with emptyDir volumes (%s): kubectl drain refuses them without --delete-emptydir-data, which deletes the data",
	"detail": concat(" ", [
		"kubectl drain refuses pods with emptyDir volumes (\"Pods with local storage (use --delete-emptydir-data to override)\");",
		"a managed node upgrade evicts them without asking. Either way the data in those volumes is deleted with the pod,",
		"as it is whenever a pod leaves its node.",
	]),
	"remediation": concat(" ", [
		"Make sure nothing in these volumes must outlive the pod (move it to a PersistentVolumeClaim if it must), then drain with",
		"--delete-emptydir-data.",
	]),
}

pods_finding(id, severity, t, pods, text) := object.union(
	{
		"key": sprintf("drain/%s", [id]),
		"category": "drain",
		"severity": severity,
		"target": t,
		"title": sprintf(text.title, [pods_phrase(pods.count)]),
		"detail": text.detail,
		"remediation": text.remediation,
		"objects": object.get(pods, "objects", []),
		"namespaces": sort({o.namespace | some o in object.get(pods, "objects", []); o.namespace}),
		"citations": citations[id],
	},
	preflight.omitted(pods.count - count(object.get(pods, "objects", []))),
)

# Live the inventory counts pods; in files mode it counts the manifests that make them.
pods_phrase(n) := sprintf("%d %s", [n, plural(n, "pod")]) if live

pods_phrase(n) := sprintf("%d %s", [n, plural(n, "manifest")]) if not live

plural(1, word) := word

plural(n, word) := sprintf("%ss", [word]) if n != 1

are(1) := "is"

are(n) := "are" if n != 1

citations := {
	"unreplicated-pods": [kubectl_filters, safe_drain],
	"emptydir-data": [kubectl_filters, "https://kubernetes.io/docs/concepts/storage/volumes/#emptydir", eks_node_update],
	"placement-no-node": [
		"https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity",
		"https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/",
		safe_drain,
	],
}

placement_finding(p, schedulable, t) := {
	"key": sprintf("drain/placement-no-node/%s/%s/%s", [p.object.namespace, kind(p), p.object.name]),
	"category": "drain",
	"severity": "warning",
	"target": t,
	"title": sprintf("%s %s/%s needs a node per replica (%s): %d replicas, %s", [
		kind(p), p.object.namespace, p.object.name, object.get(rule_phrase, p.rule, p.rule),
		p.replicas, schedulable_phrase(schedulable),
	]),
	"detail": concat(" ", [
		"Every schedulable node already runs one of its pods, so a pod evicted from a drained node has no node to go to:",
		"it stays Pending until the drained node comes back or a new one joins, and the workload runs one replica short",
		"for each node being replaced. Node selectors and taints can only make it fewer nodes.",
	]),
	"remediation": concat(" ", [
		"Before the upgrade, add a node (or use a surge upgrade that adds one first), run fewer replicas than schedulable nodes,",
		"or relax the rule to preferredDuringScheduling (anti-affinity) or ScheduleAnyway (topology spread).",
	]),
	"objects": [p.object],
	"namespaces": [p.object.namespace],
	"citations": citations["placement-no-node"],
}

rule_phrase := {
	"anti-affinity": "required pod anti-affinity on kubernetes.io/hostname",
	"topology-spread": "a DoNotSchedule topology spread on kubernetes.io/hostname",
}

kind(p) := object.get(p.object, "kind", "Workload")

schedulable_phrase(1) := "1 schedulable node"

schedulable_phrase(n) := sprintf("%d schedulable nodes", [n]) if n != 1
