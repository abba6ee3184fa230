package upgradescope.rules.noderuntime_test

import data.upgradescope.rules.noderuntime

judge(preflight, t) := fs if {
	fs := noderuntime.findings with input as {"inventory": {"source": "cluster", "preflight": preflight}, "targets": [t]}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

system(os, kernel, kubelet, names) := {
	"osImage": os, "kernelVersion": kernel, "containerRuntime": "containerd://2.1.4",
	"kubeletVersion": kubelet, "nodes": {"count": count(names), "names": names},
}

nodes(groups) := {"nodeState": {"examined": 10, "schedulable": 10, "notReady": {"count": 0}, "cordoned": {"count": 0}, "systems": groups}}

centos := system("CentOS Linux 7 (Core)", "3.10.0-1160.119.1.el7.x86_64", "v1.34.2", ["c7-1", "c7-2"])

focal := system("Ubuntu 20.04.6 LTS", "5.15.0-1071-aws", "v1.34.2", ["focal-1"])

jammy := system("Ubuntu 22.04.5 LTS", "6.8.0-1021-aws", "v1.34.2", ["jammy-1"])

al2023 := system("Amazon Linux 2023.6.20241121", "6.1.115-126.197.amzn2023.x86_64", "v1.34.2", ["al-1"])

test_an_os_release_booting_cgroup_v1_on_a_kernel_older_than_cgroup_v2_needs_is_a_blocker_from_1_35 if {
	f := only(judge(nodes([centos, jammy, al2023]), "1.35"))
	f.key == "node-runtime/cgroup-v1-os-image-old-kernel"
	f.category == "node-runtime"
	f.severity == "blocker"
	f.title == "2 nodes run OS releases that boot cgroup v1 by default, on a Linux kernel older than 5.8: the kubelet refuses cgroup v1 from 1.35"
	f.objects == [{"kind": "Node", "name": "c7-1"}, {"kind": "Node", "name": "c7-2"}]
	contains(f.detail, "Seen on: CentOS Linux 7 (Core), Linux 3.10.0-1160.119.1.el7.x86_64.")
	contains(f.detail, "stat -fc %T /sys/fs/cgroup/")
	f.citations == [
		"https://github.com/kubernetes/enhancements/blob/master/keps/sig-node/5573-remove-cgroup-v1/README.md",
		"https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.35.md",
		"https://github.com/kubernetes/kubernetes/blob/v1.35.0/pkg/kubelet/apis/config/v1beta1/defaults.go",
		"https://kubernetes.io/docs/concepts/architecture/cgroups/",
	]
	contains(f.detail, "upgraded in place, such a node runs no pods")
}

# The kubelet checks the cgroup mode, not the kernel: an old kernel under a release not known
# to boot cgroup v1 by default may run cgroup v2.
test_a_kernel_older_than_cgroup_v2_needs_alone_is_a_warning if {
	flatcar := system("Flatcar Container Linux by Kinvolk 2345.3.0 (Rhyolite)", "4.19.106-flatcar", "v1.34.2", ["fc-1"])
	f := only(judge(nodes([flatcar, jammy]), "1.35"))
	f.key == "node-runtime/cgroup-v1-kernel"
	f.severity == "warning"
	f.title == "1 node runs a Linux kernel older than 5.8, the oldest Kubernetes supports cgroup v2 on: the kubelet refuses cgroup v1 from 1.35"
	contains(f.detail, "the kubelet checks the cgroup mode a node booted, not its kernel")
	contains(f.detail, "stat -fc %T /sys/fs/cgroup/")
}

test_the_evidence_decides_the_severity if {
	cases := [
		# [OS image, kernel, key, severity]
		["Red Hat Enterprise Linux 8.10 (Ootpa)", "4.18.0-553.el8_10.x86_64", "node-runtime/cgroup-v1-os-image-old-kernel", "blocker"],
		["Rocky Linux 8.9 (Green Obsidian)", "4.18.0-513.el8.x86_64", "node-runtime/cgroup-v1-os-image-old-kernel", "blocker"],
		["Ubuntu 20.04.6 LTS", "5.4.0-200-generic", "node-runtime/cgroup-v1-os-image-old-kernel", "blocker"],
		["Ubuntu 20.04.6 LTS", "5.15.0-1071-aws", "node-runtime/cgroup-v1-os-image", "warning"],
		["Bottlerocket OS 1.0.0", "5.4.0", "node-runtime/cgroup-v1-kernel", "warning"],
		["Rocky Linux 9.4 (Blue Onyx)", "4.18.0-1", "node-runtime/cgroup-v1-kernel", "warning"], # a release booting cgroup v2, old kernel
	]
	every c in cases {
		f := only(judge(nodes([system(c[0], c[1], "v1.34.2", ["n-1"])]), "1.36"))
		f.key == c[2]
		f.severity == c[3]
	}
}

test_before_1_35_cgroup_v1_nodes_have_no_finding if {
	count(judge(nodes([centos, focal]), "1.34")) == 0
}

test_an_os_release_that_boots_cgroup_v1_by_default_is_a_warning_saying_how_to_verify if {
	f := only(judge(nodes([focal, jammy]), "1.36"))
	f.key == "node-runtime/cgroup-v1-os-image"
	f.severity == "warning"
	f.title == "1 node runs an OS release that boots cgroup v1 by default: the kubelet refuses cgroup v1 from 1.35"
	contains(f.detail, "Seen on: Ubuntu 20.04.6 LTS, Linux 5.15.0-1071-aws.")
	contains(f.detail, "tmpfs is cgroup v1")
}

test_each_listed_distribution_is_judged_at_its_first_cgroup_v2_release if {
	groups := [
		system("Debian GNU/Linux 10 (buster)", "5.10.0-32-amd64", "v1.34.0", ["deb10"]),
		system("Debian GNU/Linux 11 (bullseye)", "5.10.0-32-amd64", "v1.34.0", ["deb11"]),
		system("Red Hat Enterprise Linux 8.10 (Ootpa)", "5.14.0-1", "v1.34.0", ["rhel8"]),
		system("Rocky Linux 9.4 (Blue Onyx)", "5.14.0-427.el9.x86_64", "v1.34.0", ["rocky9"]),
		system("Fedora 30 (Server Edition)", "5.8.15-201.fc32.x86_64", "v1.34.0", ["fc30"]),
		system("Fedora Linux 39 (Server Edition)", "6.5.6-300.fc39.x86_64", "v1.34.0", ["fc39"]),
		system("Amazon Linux 2", "5.10.228-219.884.amzn2.x86_64", "v1.34.0", ["al2"]),
		system("Container-Optimized OS from Google", "6.1.100+", "v1.34.0", ["cos"]),
	]
	f := only(judge(nodes(groups), "1.35"))
	{o.name | some o in f.objects} == {"deb10", "rhel8", "fc30", "al2"}
	"https://docs.aws.amazon.com/linux/al2023/ug/cgroupv2.html" in f.citations
	not "https://docs.aws.amazon.com/linux/al2023/ug/cgroupv2.html" in only(judge(nodes([focal]), "1.35")).citations
}

configz(node, fail) := {
	"component": "kubelet", "source": "kubelet-configz", "object": {"kind": "Node", "name": node},
	"failCgroupV1": fail, "nodes": [node],
}

# A kubelet older than 1.35 reports failCgroupV1: false as its default: the upgrade's kubelet
# defaults to true, so the nodes are refused all the same.
test_a_false_failcgroupv1_before_1_35_is_the_default_and_spares_nothing if {
	fs := judge(object.union(nodes([centos]), {"components": [configz("c7-1", false), configz("c7-2", false)]}), "1.35")
	f := only(fs)
	f.severity == "blocker"
	count(f.objects) == 2
}

# A 1.35 kubelet started: with failCgroupV1: false on cgroup v1 (deprecated, info), else on
# cgroup v2 or not read (nothing).
test_nodes_already_on_a_1_35_kubelet_allowing_cgroup_v1_are_information if {
	started := system("CentOS Linux 7 (Core)", "3.10.0-1160.el7.x86_64", "v1.35.1", ["started-1", "started-2", "started-3"])
	fs := judge(object.union(nodes([started]), {"components": [configz("started-1", false), configz("started-2", true)]}), "1.36")
	f := only(fs)
	f.key == "node-runtime/cgroup-v1-os-image-old-kernel-allowed"
	f.severity == "info"
	f.objects == [{"kind": "Node", "name": "started-1"}]
	f.title == "1 node runs an OS release that boots cgroup v1 by default, on a Linux kernel older than 5.8, and its kubelet allows it with failCgroupV1: false"
	contains(f.detail, "so the kubelet still starts on cgroup v1")
	count(judge(nodes([started]), "1.36")) == 0
}

test_nodes_allowed_by_one_configuration_are_named_together if {
	started := system("Ubuntu 20.04.6 LTS", "5.15.0-1071-aws", "v1.35.1", ["focal-1", "focal-2"])
	allow := object.union(configz("focal-1", false), {"nodes": ["focal-1", "focal-2"]})
	f := only(judge(object.union(nodes([started]), {"components": [allow]}), "1.35"))
	f.key == "node-runtime/cgroup-v1-os-image-allowed"
	endswith(f.title, "boot cgroup v1 by default, and their kubelets allow it with failCgroupV1: false")
}

test_windows_nodes_have_no_cgroups if {
	win := system("Windows Server 2022 Datacenter", "10.0.20348.2849", "v1.34.2", ["win-1"])
	count(judge(nodes([win]), "1.35")) == 0
}

test_unnamed_nodes_are_counted_and_left_unnamed if {
	big := object.union(centos, {"nodes": {"count": 250, "names": ["c7-1", "c7-2"], "namesOmitted": 248}})
	f := only(judge(nodes([big]), "1.35"))
	f.title == "250 nodes run OS releases that boot cgroup v1 by default, on a Linux kernel older than 5.8: the kubelet refuses cgroup v1 from 1.35"
	count(f.objects) == 2
	f.objectsOmitted == 248
}

test_without_node_state_there_is_no_finding if {
	count(judge({}, "1.35")) == 0
	fs := noderuntime.findings with input as {"inventory": {"source": "files"}, "targets": ["1.36"]}
	count(fs) == 0
}

proxy(mode, gates) := {"components": [{
	"component": "kube-proxy", "source": "daemonset",
	"object": {"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy"},
	"proxyMode": mode, "featureGates": gates,
}]}

test_kube_proxy_in_ipvs_mode_is_a_warning_from_its_deprecation if {
	count(judge(proxy("ipvs", []), "1.34")) == 0
	f := only(judge(proxy("ipvs", []), "1.35"))
	f.key == "node-runtime/kube-proxy-ipvs/DaemonSet/kube-system/kube-proxy"
	f.severity == "warning"
	f.title == "kube-proxy runs in ipvs mode (DaemonSet kube-system/kube-proxy): deprecated since 1.35"
	f.objects == [{"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy"}]
	f.namespaces == ["kube-system"]
	only(judge(proxy("ipvs", []), "1.39")).severity == "warning"
}

test_kube_proxy_in_ipvs_mode_is_a_blocker_where_the_kep_plans_it_off if {
	f := only(judge(proxy("ipvs", []), "1.40"))
	f.severity == "blocker"
	f.title == "kube-proxy runs in ipvs mode (DaemonSet kube-system/kube-proxy): KEP-5495 plans it off at 1.40 without the KubeProxyIPVS feature gate"
}

test_the_ipvs_gate_keeps_it_a_warning_until_the_planned_removal if {
	gate := [{"name": "KubeProxyIPVS", "value": true}]
	only(judge(proxy("ipvs", gate), "1.42")).severity == "warning"
	f := only(judge(proxy("ipvs", gate), "1.43"))
	f.severity == "blocker"
	f.title == "kube-proxy runs in ipvs mode (DaemonSet kube-system/kube-proxy): KEP-5495 plans its removal at 1.43"
	only(judge(proxy("ipvs", [{"name": "KubeProxyIPVS", "value": false}]), "1.40")).severity == "blocker"
}

test_other_proxy_modes_have_no_finding if {
	count(judge(proxy("nftables", []), "1.40")) == 0
	count(judge(proxy("iptables", []), "1.40")) == 0
	count(judge(proxy("", []), "1.40")) == 0
}

test_a_kube_proxy_configuration_file_is_named_with_its_line if {
	file := {"components": [{
		"component": "kube-proxy", "source": "config-file",
		"object": {"kind": "KubeProxyConfiguration", "name": "kube-proxy-config", "file": "kube-proxy.yaml", "line": 4},
		"proxyMode": "ipvs",
	}]}
	fs := noderuntime.findings with input as {"inventory": {"source": "files", "preflight": file}, "targets": ["1.36"]}
	f := only(fs)
	f.title == "kube-proxy runs in ipvs mode (KubeProxyConfiguration kube-proxy-config): deprecated since 1.35"
	f.key == "node-runtime/kube-proxy-ipvs/KubeProxyConfiguration/kube-proxy-config"
	f.objects == [{"kind": "KubeProxyConfiguration", "name": "kube-proxy-config", "file": "kube-proxy.yaml", "line": 4}]
	f.namespaces == []
}

test_many_node_systems_are_named_up_to_the_limit_and_counted if {
	groups := [system("CentOS Linux 7 (Core)", sprintf("3.10.0-%d.el7.x86_64", [i]), "v1.34.0", [sprintf("n-%02d", [i])]) | some i in numbers.range(1, 23)]
	f := only(judge(nodes(groups), "1.35"))
	count(f.objects) == 23
	contains(f.detail, "and 3 more.")
}
