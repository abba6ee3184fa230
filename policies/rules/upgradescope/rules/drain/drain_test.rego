package upgradescope.rules.drain_test

import data.upgradescope.rules.drain

judge(source, preflight) := fs if {
	fs := drain.findings with input as {
		"inventory": {"source": source, "preflight": preflight},
		"targets": ["1.35"],
	}
}

live(preflight) := judge("cluster", preflight)

files(preflight) := judge("files", preflight)

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

pdb(spec) := object.union({"object": {"namespace": "shop", "name": "web"}, "apiVersion": "policy/v1"}, spec)

budgets(bs) := {"disruptionBudgets": bs}

status(allowed, current, desired, expected) := {"status": {
	"disruptionsAllowed": allowed, "currentHealthy": current,
	"desiredHealthy": desired, "expectedPods": expected,
}}

pods(names, omitted) := {"pods": names, "podsOmitted": omitted}

deployment(name, replicas) := {"object": {"kind": "Deployment", "namespace": "shop", "name": name, "file": "web.yaml", "line": 1}, "replicas": replicas}

# Live ------------------------------------------------------------------------------------

test_a_live_budget_that_allows_no_disruption_with_every_pod_healthy_is_a_blocker_naming_its_pods if {
	b := pdb(object.union_n([{"maxUnavailable": "0"}, status(0, 2, 2, 2), pods(["web-1", "web-2"], 0)]))
	f := only(live(budgets([b])))
	f.key == "drain/pdb-no-disruption/shop/web"
	f.category == "drain"
	f.severity == "blocker"
	f.target == "1.35"
	f.title == "PodDisruptionBudget shop/web allows no disruption: it needs 2 of its 2 pods healthy (pods web-1, web-2)"
	f.objects == [
		{"kind": "PodDisruptionBudget", "namespace": "shop", "name": "web"},
		{"kind": "Pod", "namespace": "shop", "name": "web-1"},
		{"kind": "Pod", "namespace": "shop", "name": "web-2"},
	]
	f.namespaces == ["shop"]
	"https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html" in f.citations
	not f.objectsOmitted
}

# The boundary between the two live severities: whether the budget would allow a disruption
# with every expected pod healthy.
test_live_severity_follows_what_the_budget_allows_with_every_pod_healthy if {
	cases := [
		# [allowed, current, desired, expected, want]
		[0, 3, 3, 3, {"blocker"}], # minAvailable equal to the pods
		[0, 2, 3, 2, {"blocker"}], # minAvailable above the pods
		[0, 0, 2, 2, {"blocker"}], # none healthy, none allowed even if they were
		[0, 2, 2, 3, {"warning"}], # one of three unhealthy, budget at its limit
		[0, 0, 1, 3, {"warning"}], # most unhealthy
		[1, 3, 2, 3, set()], # one disruption allowed
		[0, 0, 0, 0, set()], # selects no pod: nothing to drain
	]
	every c in cases {
		{f.severity | some f in live(budgets([pdb(status(c[0], c[1], c[2], c[3]))]))} == c[4]
	}
}

test_a_budget_blocked_only_by_unhealthy_pods_is_a_warning_that_counts_them if {
	b := pdb(object.union_n([{"minAvailable": "2"}, status(0, 2, 2, 3), pods(["web-1", "web-2", "web-3"], 0)]))
	f := only(live(budgets([b])))
	f.severity == "warning"
	f.title == "PodDisruptionBudget shop/web allows no disruption: 1 of its 3 pods is not healthy (pods web-1, web-2, web-3)"
	contains(f.remediation, "unhealthyPodEvictionPolicy: AlwaysAllow")
}

test_a_live_budget_judges_its_status_not_its_spec if {
	# maxUnavailable 0 over no pod: the status says there is nothing to drain.
	count(live(budgets([pdb(object.union({"maxUnavailable": "0"}, status(0, 0, 0, 0)))]))) == 0
}

test_the_pods_left_out_of_the_list_are_counted if {
	b := pdb(object.union_n([status(0, 150, 150, 150), pods(["web-1"], 149)]))
	f := only(live(budgets([b])))
	f.title == "PodDisruptionBudget shop/web allows no disruption: it needs 150 of its 150 pods healthy (pods web-1 and 149 more)"
	f.objectsOmitted == 149
}

test_a_budget_without_pods_listed_has_no_parenthesis if {
	f := only(live(budgets([pdb(status(0, 1, 1, 1))])))
	f.title == "PodDisruptionBudget shop/web allows no disruption: it needs 1 of its 1 pods healthy"
	f.objects == [{"kind": "PodDisruptionBudget", "namespace": "shop", "name": "web"}]
}

# Files -----------------------------------------------------------------------------------

test_in_files_mode_the_spec_decides if {
	cases := [
		# [spec, workloads, want]
		[{"maxUnavailable": "0"}, [], {"blocker"}],
		[{"maxUnavailable": "0%"}, [], {"blocker"}],
		[{"maxUnavailable": "1"}, [deployment("web", 1)], set()],
		[{"maxUnavailable": "1%"}, [deployment("web", 3)], set()], # rounds up to one pod
		[{"minAvailable": "100%"}, [], {"blocker"}],
		[{"minAvailable": "2"}, [deployment("web", 2)], {"blocker"}],
		[{"minAvailable": "3"}, [deployment("web", 2)], {"blocker"}],
		[{"minAvailable": "2"}, [deployment("web", 3)], set()],
		[{"minAvailable": "3"}, [deployment("web", 1), deployment("api", 2)], {"blocker"}], # replicas summed
		[{"minAvailable": "90%"}, [deployment("web", 3)], {"blocker"}], # ceil(2.7) is 3
		[{"minAvailable": "50%"}, [deployment("web", 3)], set()], # ceil(1.5) is 2
		[{"minAvailable": "2"}, [], set()], # replicas unknown
		[{"minAvailable": "1"}, [deployment("web", 0)], set()], # no replicas
		[{}, [deployment("web", 1)], set()],
	]
	every c in cases {
		{f.severity | some f in files(budgets([pdb(object.union(c[0], {"workloads": c[1]}))]))} == c[2]
	}
}

test_a_files_budget_names_its_workloads_with_file_and_line if {
	f := only(files(budgets([pdb({"minAvailable": "2", "workloads": [deployment("web", 2)]})])))
	f.title == "PodDisruptionBudget shop/web allows no disruption: minAvailable 2 with 2 replicas (Deployment shop/web)"
	f.objects[1] == {"kind": "Deployment", "namespace": "shop", "name": "web", "file": "web.yaml", "line": 1}
}

scaled(name, replicas) := object.union(deployment(name, replicas), {"autoscaled": true})

# An autoscaler's replicas are not the ones written: minAvailable against them says nothing,
# while maxUnavailable 0 and minAvailable 100% allow no disruption at any scale.
test_a_files_budget_over_an_autoscaled_workload_is_judged_by_its_spec_alone if {
	cases := [
		# [spec, workloads, want]
		[{"minAvailable": "1"}, [scaled("web", 1)], set()], # an HPA with minReplicas 3 scales the written 1
		[{"minAvailable": "2"}, [scaled("web", 1), deployment("api", 1)], set()], # any selected workload autoscaled
		[{"minAvailable": "90%"}, [scaled("web", 3)], set()],
		[{"minAvailable": "1"}, [object.union(scaled("web", 1), {"autoscaled": false})], {"blocker"}],
		[{"maxUnavailable": "0"}, [scaled("web", 3)], {"blocker"}],
		[{"maxUnavailable": "0%"}, [scaled("web", 3)], {"blocker"}],
		[{"minAvailable": "100%"}, [scaled("web", 3)], {"blocker"}],
	]
	every c in cases {
		{f.severity | some f in files(budgets([pdb(object.union(c[0], {"workloads": c[1]}))]))} == c[2]
	}
}

test_a_files_budget_with_workloads_left_out_cannot_sum_its_replicas if {
	b := pdb({"minAvailable": "2", "workloads": [deployment("web", 2)], "workloadsOmitted": 1})
	count(files(budgets([b]))) == 0
	f := only(files(budgets([object.union(b, {"minAvailable": "100%"})])))
	f.objectsOmitted == 1
	f.title == "PodDisruptionBudget shop/web allows no disruption: minAvailable 100% (Deployment shop/web and 1 more)"
}

test_a_v1beta1_budget_with_an_empty_selector_selects_nothing if {
	b := pdb({"apiVersion": "policy/v1beta1", "selectorEmpty": true, "maxUnavailable": "0"})
	count(files(budgets([b]))) == 0
	count(files(budgets([object.union(b, {"apiVersion": "policy/v1"})]))) == 1
}

test_no_budgets_no_findings if {
	count(files({})) == 0
	count(drain.findings) == 0 with input as {"inventory": {"source": "cluster"}, "targets": ["1.35"]}
}

# Pods a drain refuses ---------------------------------------------------------------------

pod(ns, name) := {"kind": "Pod", "namespace": ns, "name": name}

pod_list(n, objects) := {"count": n, "objects": objects}

drain_pods(unreplicated, local) := {"drain": {"examined": 10, "unreplicated": unreplicated, "localStorage": local}}

test_pods_without_a_controller_are_a_warning if {
	f := only(live(drain_pods(pod_list(2, [pod("ops", "debug"), pod("web", "shell")]), pod_list(0, []))))
	f.key == "drain/unreplicated-pods"
	f.severity == "warning"
	f.title == "Pods no controller owns (2 pods): kubectl drain refuses them without --force, which deletes them for good"
	f.objects == [pod("ops", "debug"), pod("web", "shell")]
	f.namespaces == ["ops", "web"]
	"https://github.com/kubernetes/kubectl/blob/v0.35.0/pkg/drain/filters.go" in f.citations
}

test_pods_with_emptydir_data_are_info if {
	f := only(live(drain_pods(pod_list(0, []), pod_list(3, [pod("web", "cache-0")]))))
	f.key == "drain/emptydir-data"
	f.severity == "info"
	f.title == "Pods with emptyDir volumes (3 pods): kubectl drain refuses them without --delete-emptydir-data, which deletes the data"
	f.objectsOmitted == 2
}

test_counted_pods_read_as_pods_live_and_as_manifests_in_files_mode if {
	one := drain_pods(pod_list(1, [pod("ops", "debug")]), pod_list(0, []))
	startswith(only(live(one)).title, "Pods no controller owns (1 pod):")
	startswith(only(files(one)).title, "Pods no controller owns (1 manifest):")
	two := drain_pods(pod_list(0, []), pod_list(2, [pod("web", "a"), pod("web", "b")]))
	startswith(only(files(two)).title, "Pods with emptyDir volumes (2 manifests):")
}

test_no_drain_pods_no_findings if {
	count(live(drain_pods(pod_list(0, []), pod_list(0, [])))) == 0
}

# Placements -------------------------------------------------------------------------------

placement(replicas, rule) := {"object": {"kind": "StatefulSet", "namespace": "db", "name": "pg"}, "replicas": replicas, "rule": rule}

placed(replicas, schedulable) := {
	"placements": [placement(replicas, "anti-affinity")],
	"nodeState": {"examined": 5, "schedulable": schedulable, "notReady": {"count": 0}, "cordoned": {"count": 0}},
}

test_a_placement_with_as_many_replicas_as_schedulable_nodes_is_a_warning if {
	f := only(live(placed(3, 3)))
	f.key == "drain/placement-no-node/db/StatefulSet/pg"
	f.severity == "warning"
	f.title == "StatefulSet db/pg needs a node per replica (required pod anti-affinity on kubernetes.io/hostname): 3 replicas, 3 schedulable nodes"
	f.objects == [{"kind": "StatefulSet", "namespace": "db", "name": "pg"}]
}

test_placements_leave_a_node_only_below_the_schedulable_nodes if {
	count(live(placed(4, 3))) == 1
	count(live(placed(2, 3))) == 0
	count(live(placed(0, 0))) == 0
	contains(only(live(placed(1, 1))).title, "1 replicas, 1 schedulable node")
}

test_a_topology_spread_placement_says_so if {
	p := {"placements": [placement(2, "topology-spread")], "nodeState": {"schedulable": 2}}
	contains(only(live(p)).title, "a DoNotSchedule topology spread on kubernetes.io/hostname")
}

test_without_node_state_placements_are_not_judged if {
	count(files({"placements": [placement(5, "anti-affinity")]})) == 0
}

test_the_unhealthy_pods_are_counted_in_words if {
	f := only(live(budgets([pdb(status(0, 0, 1, 3))])))
	f.title == "PodDisruptionBudget shop/web allows no disruption: 3 of its 3 pods are not healthy"
}
