package upgradescope.rules.nodehealth_test

import data.upgradescope.rules.nodehealth

judge(state) := fs if {
	fs := nodehealth.findings with input as {
		"inventory": {"source": "cluster", "preflight": {"nodeState": state}},
		"targets": ["1.35"],
	}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

names(list, omitted) := {"count": count(list) + omitted, "names": list}

none := {"count": 0}

state(not_ready, cordoned, pressure) := {
	"examined": 6, "schedulable": 3,
	"notReady": not_ready, "cordoned": cordoned, "pressure": pressure,
}

test_not_ready_nodes_are_a_blocker_naming_them if {
	f := only(judge(state(names(["n1", "n2"], 0), none, [])))
	f.key == "node-health/not-ready"
	f.category == "node-health"
	f.severity == "blocker"
	f.title == "2 nodes are not Ready: n1, n2"
	f.objects == [{"kind": "Node", "name": "n1"}, {"kind": "Node", "name": "n2"}]
	f.namespaces == []
	"https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/#how-it-works" in f.citations
	not f.objectsOmitted
}

test_cordoned_nodes_are_a_warning if {
	f := only(judge(state(none, names(["n3"], 0), [])))
	f.key == "node-health/cordoned"
	f.severity == "warning"
	f.title == "1 node is cordoned: n3"
}

test_each_pressure_condition_is_its_own_warning if {
	fs := judge(state(none, none, [
		{"condition": "DiskPressure", "nodes": names(["n4"], 0)},
		{"condition": "MemoryPressure", "nodes": names(["n4", "n5"], 0)},
		{"condition": "PIDPressure", "nodes": none},
	]))
	{[f.key, f.severity, f.title] | some f in fs} == {
		["node-health/pressure/DiskPressure", "warning", "DiskPressure on 1 node: n4"],
		["node-health/pressure/MemoryPressure", "warning", "MemoryPressure on 2 nodes: n4, n5"],
	}
}

test_nodes_left_out_of_the_names_are_counted if {
	f := only(judge(state(names(["n1"], 250), none, [])))
	f.title == "251 nodes are not Ready: n1 and 250 more"
	f.objectsOmitted == 250
}

test_a_healthy_cluster_or_no_node_state_has_no_findings if {
	count(judge(state(none, none, []))) == 0
	count(judge({"examined": 3, "schedulable": 3, "notReady": none, "cordoned": none})) == 0
	count(nodehealth.findings) == 0 with input as {"inventory": {"source": "files"}, "targets": ["1.35"]}
}
