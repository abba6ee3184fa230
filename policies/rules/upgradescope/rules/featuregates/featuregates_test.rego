package upgradescope.rules.featuregates_test

import data.upgradescope.rules.featuregates

# table is a small feature gate table with one gate per boundary, over minors 1.30 to 1.35.
table := {
	"minors": ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"],
	"gates": {
		"Gone": {"changes": [
			{"minor": "1.30", "default": true, "preRelease": "Beta"},
			{"minor": "1.32", "default": true, "preRelease": "GA", "lockToDefault": true},
			{"minor": "1.34", "removed": true},
		]},
		"Deprecated": {"changes": [{"minor": "1.30", "default": false, "preRelease": "Deprecated"}]},
		"DeprecatedThenGone": {"changes": [
			{"minor": "1.30", "default": true, "preRelease": "GA"},
			{"minor": "1.33", "default": false, "preRelease": "Deprecated"},
			{"minor": "1.35", "removed": true},
		]},
		"Locked": {"changes": [
			{"minor": "1.30", "default": false, "preRelease": "Beta"},
			{"minor": "1.33", "default": true, "preRelease": "GA", "lockToDefault": true},
		]},
		"LockedThenGone": {"changes": [
			{"minor": "1.30", "default": true, "preRelease": "GA", "lockToDefault": true},
			{"minor": "1.34", "removed": true},
		]},
		"Alpha": {"changes": [{"minor": "1.30", "default": false, "preRelease": "Alpha"}]},
		"LockedOff": {"changes": [{"minor": "1.30", "default": false, "preRelease": "Deprecated", "lockToDefault": true}]},
		"LastMinor": {"changes": [
			{"minor": "1.30", "default": true, "preRelease": "Beta"},
			{"minor": "1.36", "removed": true},
		]},
	},
}

pod(name) := {"kind": "Pod", "namespace": "kube-system", "name": name}

apiserver(gates) := {
	"component": "kube-apiserver",
	"source": "static-pod",
	"object": pod("kube-apiserver-cp1"),
	"featureGates": gates,
	"nodes": ["cp1"],
}

gate(name, value) := {"name": name, "value": value}

inventory(components) := {"source": "cluster", "preflight": {"components": components}}

judge(components, t) := fs if {
	fs := featuregates.findings with input as {"targets": [t], "inventory": inventory(components)}
		with data.upgradescope.kb.featuregates as table
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

test_a_gate_removed_exactly_at_the_target_is_a_blocker if {
	f := only(judge([apiserver([gate("Gone", true)])], "1.34"))
	f.key == "feature-gates/removed/kube-apiserver/Gone"
	f.category == "feature-gates"
	f.severity == "blocker"
	f.target == "1.34"
	f.title == "kube-apiserver will not start on 1.34: feature gate Gone was removed in 1.34 (set in kube-system/kube-apiserver-cp1; on nodes cp1)"
	contains(f.detail, `"unrecognized feature gate: Gone"`)
	contains(f.detail, "Its last declared state (from 1.32) was GA with default true, locked.")
	f.remediation == "Remove Gone from kube-apiserver's feature gates (--feature-gates) before upgrading to 1.34."
	f.objects == [
		{"kind": "Node", "name": "cp1"},
		{"kind": "Pod", "namespace": "kube-system", "name": "kube-apiserver-cp1"},
	]
	f.namespaces == ["kube-system"]
	featuregates.citation_unknown in f.citations
	featuregates.citation_removed in f.citations
	not f.objectsOmitted
}

test_a_gate_removed_before_the_target_is_a_blocker_naming_the_removal if {
	f := only(judge([apiserver([gate("Gone", false)])], "1.35"))
	f.severity == "blocker"
	contains(f.title, "feature gate Gone was removed in 1.34")
}

test_a_gate_removed_in_the_minor_after_the_target_is_a_warning if {
	f := only(judge([apiserver([gate("Gone", true)])], "1.33"))
	f.key == "feature-gates/removed/kube-apiserver/Gone"
	f.severity == "warning"
	f.title == "kube-apiserver is started with feature gate Gone, removed in 1.34, the minor after 1.33 (set in kube-system/kube-apiserver-cp1; on nodes cp1)"
	f.remediation == "Remove Gone from kube-apiserver's feature gates (--feature-gates) before upgrading to 1.34."
}

test_two_minors_before_its_removal_a_gate_at_its_default_has_no_finding if {
	count(judge([apiserver([gate("Gone", true)])], "1.32")) == 0
}

test_a_deprecated_gate_at_the_target_is_a_warning if {
	f := only(judge([apiserver([gate("Deprecated", true)])], "1.31"))
	f.severity == "warning"
	f.key == "feature-gates/removed/kube-apiserver/Deprecated"
	f.title == "kube-apiserver is started with feature gate Deprecated, deprecated in 1.31 (set in kube-system/kube-apiserver-cp1; on nodes cp1)"
	endswith(f.remediation, "(--feature-gates) while the component still accepts it: a later minor removes it.")
}

test_deprecation_is_judged_from_the_minor_it_starts_and_removal_next_takes_its_place if {
	count(judge([apiserver([gate("DeprecatedThenGone", true)])], "1.32")) == 0
	contains(only(judge([apiserver([gate("DeprecatedThenGone", true)])], "1.33")).title, "deprecated in 1.33")
	contains(only(judge([apiserver([gate("DeprecatedThenGone", true)])], "1.34")).title, "removed in 1.35, the minor after 1.34")
	only(judge([apiserver([gate("DeprecatedThenGone", true)])], "1.35")).severity == "blocker"
}

test_a_locked_gate_set_to_the_other_value_is_a_blocker if {
	f := only(judge([apiserver([gate("Locked", false)])], "1.33"))
	f.key == "feature-gates/locked/kube-apiserver/Locked"
	f.category == "feature-gates"
	f.severity == "blocker"
	f.title == concat(" ", [
		"kube-apiserver will not start on 1.33: feature gate Locked is locked to true and set to false",
		"(set in kube-system/kube-apiserver-cp1; on nodes cp1)",
	])
	contains(f.detail, `"cannot set feature gate Locked to false, feature is locked to true"`)
	f.remediation == concat(" ", [
		"Remove Locked=false from kube-apiserver's feature gates (--feature-gates) before upgrading to 1.33:",
		"the feature is on there whatever the setting says.",
	])
	featuregates.citation_locked in f.citations
}

test_a_gate_locked_off_and_set_on_is_refused_by_the_lock_alone if {
	f := only(judge([apiserver([gate("LockedOff", true)])], "1.31"))
	f.key == "feature-gates/locked/kube-apiserver/LockedOff"
	contains(f.title, "feature gate LockedOff is locked to false and set to true")
	endswith(f.remediation, "the feature is off there whatever the setting says.")
	contains(only(judge([apiserver([gate("LockedOff", false)])], "1.31")).title, "deprecated in 1.31")
}

test_a_locked_gate_at_its_default_and_a_gate_not_yet_locked_have_no_finding if {
	count(judge([apiserver([gate("Locked", true)])], "1.33")) == 0
	count(judge([apiserver([gate("Locked", false)])], "1.32")) == 0
}

test_a_setting_the_lock_refuses_gets_the_lock_blocker_alone if {
	f := only(judge([apiserver([gate("LockedThenGone", false)])], "1.33"))
	f.key == "feature-gates/locked/kube-apiserver/LockedThenGone"
	g := only(judge([apiserver([gate("LockedThenGone", true)])], "1.33"))
	g.key == "feature-gates/removed/kube-apiserver/LockedThenGone"
	g.severity == "warning"
}

test_a_gate_no_minor_declares_is_not_judged if {
	count(judge([apiserver([gate("VendorGate", true)])], "1.34")) == 0
}

test_an_alpha_gate_set_either_way_has_no_finding if {
	count(judge([apiserver([gate("Alpha", true)]), kubelet("n1", ["n1"], 0)], "1.34")) == 1
	count(judge([apiserver([gate("Alpha", false)])], "1.34")) == 0
}

test_targets_outside_the_table_are_not_judged if {
	count(judge([apiserver([gate("Gone", true)])], "1.36")) == 0
	count(judge([apiserver([gate("Deprecated", true)])], "1.29")) == 0
}

test_the_newest_minor_has_no_removal_warning_it_cannot_know if {
	count(judge([apiserver([gate("LastMinor", true)])], "1.35")) == 0
}

test_in_files_mode_the_gates_line_names_where_it_is_set if {
	manifest := {
		"component": "kube-apiserver",
		"source": "static-pod",
		"object": {"kind": "Pod", "namespace": "kube-system", "name": "kube-apiserver", "file": "manifests/kube-apiserver.yaml", "line": 1},
		"featureGates": [{"name": "Gone", "value": true, "line": 17}],
	}
	f := only(judge([manifest], "1.34"))
	f.title == "kube-apiserver will not start on 1.34: feature gate Gone was removed in 1.34 (set in manifests/kube-apiserver.yaml:17)"
	f.objects == [{"kind": "Pod", "namespace": "kube-system", "name": "kube-apiserver", "file": "manifests/kube-apiserver.yaml", "line": 17}]
}

test_without_the_gates_line_the_objects_line_stays if {
	config := {
		"component": "kubelet",
		"source": "config-file",
		"object": {"kind": "KubeletConfiguration", "name": "kubelet", "file": "kubelet/config.yaml", "line": 3},
		"featureGates": [gate("Gone", true)],
	}
	f := only(judge([config], "1.34"))
	f.title == "kubelet will not start on 1.34: feature gate Gone was removed in 1.34 (set in kubelet/config.yaml:3)"
	f.objects[0].line == 3
	f.remediation == "Remove Gone from kubelet's feature gates (featureGates in its KubeletConfiguration, or --feature-gates) before upgrading to 1.34."
	f.namespaces == []
}

kubelet(node, nodes, omitted) := {
	"component": "kubelet",
	"source": "kubelet-configz",
	"object": {"kind": "Node", "name": node},
	"featureGates": [gate("Gone", true)],
	"nodes": nodes,
	"nodesOmitted": omitted,
}

test_live_kubelets_are_named_by_their_nodes_with_those_left_out_counted if {
	fs := judge([kubelet("a1", ["a1", "a2"], 0), kubelet("b1", ["b1", "b2", "b3"], 40)], "1.34")
	f := only(fs)
	f.key == "feature-gates/removed/kubelet/Gone"
	f.title == "kubelet will not start on 1.34: feature gate Gone was removed in 1.34 (on nodes a1, a2, b1 and 42 more)"
	f.objects == [{"kind": "Node", "name": n} | some n in ["a1", "a2", "b1", "b2", "b3"]]
	f.objectsOmitted == 40
}

on_provider(components, provider, t) := fs if {
	fs := featuregates.findings with input as {"targets": [t], "inventory": object.union(inventory(components), {"provider": provider})}
		with data.upgradescope.kb.featuregates as table
}

# A managed provider writes the kubelet configuration of the nodes it creates: a gate in
# today's configz does not stop the new kubelet unless the node pool's configuration sets it.
test_kubelets_read_from_configz_on_a_managed_provider_are_at_most_a_warning if {
	cases := [
		# [provider, severity]
		["eks", "warning"],
		["gke", "warning"],
		["aks", "warning"],
		["other", "blocker"],
		["", "blocker"],
	]
	every c in cases {
		only(on_provider([kubelet("a1", ["a1"], 0)], c[0], "1.34")).severity == c[1]
	}
	f := only(on_provider([kubelet("a1", ["a1"], 0)], "eks", "1.34"))
	f.title == concat(" ", [
		"kubelet is started with feature gate Gone, removed in 1.34,",
		"on EKS nodes the upgrade replaces with the node pool's kubelet configuration (on nodes a1)",
	])
	contains(f.detail, "When the upgrade replaces the nodes, EKS writes the new kubelets' configuration from the node pool's")
}

test_the_managed_provider_cap_covers_only_configz_and_keeps_warnings if {
	# a kubelet configuration from a file is the node's own: still a blocker
	file := object.union(kubelet("a1", ["a1"], 0), {"source": "config-file"})
	only(on_provider([file], "gke", "1.34")).severity == "blocker"

	# one setting outside configz keeps the blocker
	only(on_provider([kubelet("a1", ["a1"], 0), file], "gke", "1.34")).severity == "blocker"

	# a warning stays a warning, and says why
	w := only(on_provider([kubelet("a1", ["a1"], 0)], "aks", "1.33"))
	w.severity == "warning"
	contains(w.detail, "AKS writes the new kubelets' configuration")

	# the lock is capped too
	locked := object.union(kubelet("a1", ["a1"], 0), {"featureGates": [gate("Locked", false)]})
	l := only(on_provider([locked], "eks", "1.34"))
	l.key == "feature-gates/locked/kubelet/Locked"
	l.severity == "warning"
	l.title == concat(" ", [
		"kubelet is started with feature gate Locked=false, locked to true at 1.34,",
		"on EKS nodes the upgrade replaces with the node pool's kubelet configuration (on nodes a1)",
	])
	only(on_provider([locked], "", "1.34")).severity == "blocker"

	# the control plane's components are not the node pool's
	only(on_provider([apiserver([gate("Gone", true)])], "eks", "1.34")).severity == "blocker"
}

test_each_component_kind_has_its_own_finding_and_its_entries_are_one if {
	scheduler := {
		"component": "kube-scheduler",
		"source": "static-pod",
		"object": {"kind": "Pod", "namespace": "kube-system", "name": "kube-scheduler-cp1"},
		"featureGates": [gate("Gone", true)],
	}
	second := object.union(apiserver([gate("Gone", true)]), {"object": pod("kube-apiserver-cp2"), "nodes": ["cp2"]})
	fs := judge([apiserver([gate("Gone", true)]), second, scheduler], "1.34")
	{f.key | some f in fs} == {"feature-gates/removed/kube-apiserver/Gone", "feature-gates/removed/kube-scheduler/Gone"}
	some f in fs
	f.key == "feature-gates/removed/kube-apiserver/Gone"
	f.title == concat(" ", [
		"kube-apiserver will not start on 1.34: feature gate Gone was removed in 1.34",
		"(set in kube-system/kube-apiserver-cp1, kube-system/kube-apiserver-cp2; on nodes cp1, cp2)",
	])
}

test_more_than_three_objects_are_counted_in_the_title if {
	pods := [object.union(apiserver([gate("Gone", true)]), {"object": pod(sprintf("kube-apiserver-cp%d", [i])), "nodes": []}) |
		some i in numbers.range(1, 5)
	]
	f := only(judge(pods, "1.34"))
	contains(f.title, "(set in kube-system/kube-apiserver-cp1, kube-system/kube-apiserver-cp2, kube-system/kube-apiserver-cp3 and 2 more)")
}

test_an_inventory_without_a_preflight_section_has_no_finding if {
	count(featuregates.findings) == 0 with input as {"targets": ["1.34"], "inventory": {"source": "cluster"}}
		with data.upgradescope.kb.featuregates as table
}

test_the_generated_table_dates_real_removals_and_locks if {
	components := [apiserver([gate("AppArmor", true), gate("SidecarContainers", false)])]
	fs := featuregates.findings with input as {"targets": ["1.33"], "inventory": inventory(components)}
	{[f.key, f.severity] | some f in fs} == {
		["feature-gates/removed/kube-apiserver/AppArmor", "blocker"],
		["feature-gates/locked/kube-apiserver/SidecarContainers", "blocker"],
	}
}

test_a_file_without_a_line_is_named_by_the_file if {
	config := {"component": "kube-proxy", "source": "config-file", "object": {"name": "kube-proxy", "file": "proxy.yaml"}, "featureGates": [gate("Gone", true)]}
	contains(only(judge([config], "1.34")).title, "(set in proxy.yaml)")
}

test_a_kind_less_object_is_named_by_its_name if {
	config := {"component": "kube-proxy", "source": "configmap", "object": {"name": "kube-proxy"}, "featureGates": [gate("Gone", true)]}
	f := only(judge([config], "1.34"))
	f.title == "kube-proxy will not start on 1.34: feature gate Gone was removed in 1.34 (set in kube-proxy)"
	f.remediation == "Remove Gone from kube-proxy's feature gates (featureGates in its KubeProxyConfiguration, or --feature-gates) before upgrading to 1.34."
}

test_a_cluster_scoped_object_is_named_with_its_kind if {
	config := {"component": "kube-proxy", "source": "daemonset", "object": {"kind": "Node", "name": "n9"}, "featureGates": [gate("Gone", true)]}
	contains(only(judge([config], "1.34")).title, "(set in node n9)")
}
