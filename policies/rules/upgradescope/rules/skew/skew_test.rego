package upgradescope.rules.skew_test

import data.upgradescope.rules.skew

skew_kb := {
	"kubeletMaxBehind": 3, "kubeletMaxBehindBefore125": 2, "kubeletWindowChangedIn": "1.25",
	"kubeProxyMaxBehind": 3, "controlPlaneMaxBehind": 1, "apiserverMaxSpread": 1,
	"kubectlMaxSkew": 1, "kubectlCitations": ["https://kubernetes.io/releases/version-skew-policy/#kubectl"],
	"citations": ["https://kubernetes.io/releases/version-skew-policy/"],
}

findings(inventory, t) := fs if {
	fs := skew.findings with input as {"inventory": inventory, "targets": [t]}
		with data.upgradescope.kb.skew as skew_kb
}

judge(inventory, t) := {[f.key, f.severity] | some f in findings(inventory, t)}

nodes(version, names) := {"kubeletVersion": version, "count": count(names), "names": names}

test_kubelets_more_than_three_behind_the_target_block_it if {
	inv := {"serverVersion": "v1.33.2", "nodes": [nodes("v1.33.1", ["a"]), nodes("v1.30.4-eks-1", ["b"])]}
	judge(inv, "1.33") == set()
	judge(inv, "1.34") == {["version-skew/kubelet-post-upgrade", "blocker"]}
}

test_the_window_is_two_minors_before_1_25 if {
	inv := {"serverVersion": "v1.22.0", "nodes": [nodes("v1.21.3", ["a"])]}
	judge(inv, "1.23") == set()
	judge(inv, "1.24") == {["version-skew/kubelet-post-upgrade", "blocker"], ["version-skew/upgrade-path", "info"]}
}

test_findings_name_at_most_100_nodes_and_count_the_rest if {
	many := {"kubeletVersion": "v1.28.0", "count": 250, "names": [sprintf("n%03d", [i]) | some i in numbers.range(0, 99)], "namesOmitted": 150}
	some f in findings({"serverVersion": "v1.31.0", "nodes": [many]}, "1.32")
	f.key == "version-skew/kubelet-post-upgrade"
	f.title == "250 kubelet(s) would be more than 3 minors behind Kubernetes 1.32"
	endswith(f.detail, "n099 and 150 more")
}

test_kubelets_already_out_of_window_are_a_warning if {
	inv := {"serverVersion": "v1.33.0+k3s1", "nodes": [nodes("v1.29.0", ["old"])]}
	["version-skew/kubelet-current", "warning"] in judge(inv, "1.33")
}

# The skew policy's HA example: kube-apiserver instances at 1.32 and 1.31 support kubelets at
# 1.31, 1.30 and 1.29; 1.32 is newer than one instance and 1.28 more than three behind the other.
ha_control_plane := [
	{"component": "kube-apiserver", "version": "v1.32.1"},
	{"component": "kube-apiserver", "version": "v1.31.5"},
]

test_in_an_ha_cluster_the_kubelet_window_hangs_from_the_newest_apiserver if {
	cases := {
		"v1.32.0": {["version-skew/kubelet-newer-than-apiserver", "warning"]},
		"v1.31.0": set(),
		"v1.29.9": set(),
		"v1.28.9": {["version-skew/kubelet-current", "warning"], ["version-skew/kubelet-post-upgrade", "blocker"]},
	}
	every kubelet, want in cases {
		inv := {"serverVersion": "v1.31.5", "controlPlane": ha_control_plane, "nodes": [nodes(kubelet, ["n"])]}
		judge(inv, "1.32") == want
	}
}

test_a_kubelet_behind_the_newest_apiserver_names_it if {
	inv := {"serverVersion": "v1.31.5", "controlPlane": ha_control_plane, "nodes": [nodes("v1.28.9", ["old"])]}
	some f in findings(inv, "1.32")
	f.key == "version-skew/kubelet-current"
	f.title == "1 kubelet(s) are more than 3 minors behind the control plane (1.32) already"
	f.detail == "Nodes: old"
}

test_a_kubelet_newer_than_the_apiserver_is_a_warning if {
	inv := {"serverVersion": "v1.32.0", "nodes": [nodes("v1.33.0", ["n"])]}
	["version-skew/kubelet-newer-than-apiserver", "warning"] in judge(inv, "1.33")
}

test_unparseable_kubelets_are_info if {
	judge({"serverVersion": "v1.32.0", "nodes": [nodes("unknown", ["n"])]}, "1.33") == {["version-skew/kubelet-unparseable", "info"]}
}

test_no_server_version_means_no_findings if {
	judge({"nodes": [nodes("v1.20.0", ["n"])]}, "1.33") == set()
}

test_apiserver_spread_and_control_plane_skew if {
	inv := {"serverVersion": "v1.31.0", "controlPlane": [
		{"component": "kube-apiserver", "version": "v1.31.2"},
		{"component": "kube-apiserver", "version": "v1.33.0"},
		{"component": "kube-controller-manager", "version": "v1.32.0"},
		{"component": "kube-scheduler", "version": "v1.30.0"},
	]}
	got := judge(inv, "1.32")
	["version-skew/apiserver-ha-spread", "warning"] in got
	["version-skew/kube-controller-manager-newer", "blocker"] in got
	["version-skew/kube-scheduler-behind", "warning"] in got
}

test_kube_proxy_rules if {
	inv := {
		"serverVersion": "v1.32.0",
		"controlPlane": [
			{"component": "kube-apiserver", "version": "v1.32.0"},
			{"component": "kube-proxy", "version": "v1.28.0", "kubeletVersion": "v1.32.0", "count": 1, "nodes": ["n1"]},
			{"component": "kube-proxy", "version": "v1.29.0", "kubeletVersion": "v1.28.0", "count": 1, "nodes": ["n2"]},
		],
	}
	got := judge(inv, "1.32")
	["version-skew/kube-proxy-behind", "warning"] in got
	["version-skew/kube-proxy-kubelet/1.28/1.32", "warning"] in got
	["version-skew/kube-proxy-kubelet/1.29/1.28", "warning"] in got
	["version-skew/kube-proxy-post-upgrade", "blocker"] in judge(inv, "1.33")
}

test_a_target_more_than_one_minor_ahead_is_an_upgrade_path_note if {
	judge({"serverVersion": "v1.31.4-gke.1106000"}, "1.33") == {["version-skew/upgrade-path", "info"]}
	judge({"serverVersion": "v1.31.4-gke.1106000"}, "1.32") == set()
}

test_an_emulated_minor_is_the_current_minor if {
	judge({"serverVersion": "v1.35.4", "emulatedVersion": "1.32"}, "1.34") == {["version-skew/upgrade-path", "info"]}
}

# kubectl ----------------------------------------------------------------------------------

kubectl(version, users, last) := {"version": version, "count": 5, "users": users, "lastSeen": last}

# An inventory of manifests with an exported audit log: no server version.
with_kubectl(clients) := {"auditCalls": {
	"since": "2026-10-30T12:00:00Z", "events": 10, "requests": 10, "deprecatedRequests": 0,
	"kubectl": clients,
}}

test_kubectl_within_one_minor_of_the_target_is_in_policy if {
	inv := with_kubectl([
		kubectl("v1.32.1", ["a"], "2026-11-29T00:00:00Z"),
		kubectl("v1.33.0", ["b"], "2026-11-29T00:00:00Z"),
		kubectl("v1.34.2", ["c"], "2026-11-29T00:00:00Z"),
	])
	judge(inv, "1.33") == set()
}

test_kubectl_more_than_one_minor_from_the_target_is_a_warning_naming_its_users if {
	inv := with_kubectl([
		kubectl("v1.30.2", ["alice", "bob"], "2026-11-29T11:30:00Z"),
		object.union(kubectl("v1.30.9", ["carol"], "2026-11-01T00:00:00Z"), {"count": 1, "usersOmitted": 2}),
		kubectl("v1.36.0", ["dan"], "2026-11-29T00:00:00Z"),
	])
	judge(inv, "1.33") == {["version-skew/kubectl/1.30", "warning"], ["version-skew/kubectl/1.36", "warning"]}
	some f in findings(inv, "1.33")
	f.key == "version-skew/kubectl/1.30"
	f.title == "kubectl 1.30 is 3 minors behind Kubernetes 1.33 (kubectl is supported within 1 minor of kube-apiserver)"
	f.detail == concat("", [
		"The audit log saw v1.30.2 (5 requests, last seen 2026-11-29T11:30:00Z) used by alice, bob; ",
		"v1.30.9 (1 request, last seen 2026-11-01T00:00:00Z) used by carol and 2 more.",
	])
	f.remediation == "Move these users to kubectl 1.32 to 1.34 before the control plane runs 1.33."
	f.citations == ["https://kubernetes.io/releases/version-skew-policy/#kubectl"]
	some ahead in findings(inv, "1.33")
	ahead.title == "kubectl 1.36 is 3 minors ahead of Kubernetes 1.33 (kubectl is supported within 1 minor of kube-apiserver)"
}

test_kubectl_two_minors_away_says_so if {
	inv := with_kubectl([kubectl("v1.31.0", [], "2026-11-29T00:00:00Z"), kubectl("v1.35.0", ["e"], "2026-11-29T00:00:00Z")])
	titles := {f.title | some f in findings(inv, "1.33")}
	titles == {
		"kubectl 1.31 is 2 minors behind Kubernetes 1.33 (kubectl is supported within 1 minor of kube-apiserver)",
		"kubectl 1.35 is 2 minors ahead of Kubernetes 1.33 (kubectl is supported within 1 minor of kube-apiserver)",
	}
	some f in findings(inv, "1.33")
	f.key == "version-skew/kubectl/1.31"
	f.detail == "The audit log saw v1.31.0 (5 requests, last seen 2026-11-29T00:00:00Z) used by users the audit log did not name."
}

test_kubectl_last_seen_before_the_window_is_not_judged if {
	inv := with_kubectl([kubectl("v1.28.1", ["carol"], "2026-10-30T11:59:59Z"), kubectl("v1.27.0", ["x"], "2026-01-01T00:00:00Z")])
	judge(inv, "1.33") == set()
}

test_a_kubectl_version_that_does_not_parse_is_not_judged if {
	judge(with_kubectl([kubectl("unknown", ["x"], "2026-11-29T00:00:00Z")]), "1.33") == set()
}

test_a_kubectl_built_without_version_stamps_is_not_judged if {
	judge(with_kubectl([kubectl("v0.0.0-master+$Format", ["dev"], "2026-11-29T00:00:00Z")]), "1.33") == set()
}
