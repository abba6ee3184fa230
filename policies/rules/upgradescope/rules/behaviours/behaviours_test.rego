package upgradescope.rules.behaviours_test

import data.upgradescope.kb
import data.upgradescope.lib.versions
import data.upgradescope.rules.behaviours

judge(facts, t) := fs if {
	fs := behaviours.findings with input as object.union(facts, {"targets": [t]})
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

observation(id, objects, extra) := object.union(
	{"id": id, "available": true, "examined": 20, "count": count(objects), "objects": objects},
	extra,
)

probes(obs) := {"facts": {"probes": {obs.id: obs}}}

deployment(ns, name, values) := {"group": "apps", "kind": "Deployment", "namespace": ns, "name": name, "values": values}

docker_socket(objects) := probes(observation("kb/pod-docker-socket", objects, {}))

test_a_removed_behaviour_at_or_past_the_target_is_a_blocker if {
	f := only(judge(docker_socket([deployment("ci", "runner", ["/var/run/docker.sock"])]), "1.36"))
	f.key == "removed-behaviour/docker-socket"
	f.category == "removed-behaviour"
	f.severity == "blocker"
	f.target == "1.36"
	f.title == "Workloads mount the Docker socket: removed in 1.24 (1 object)"
	f.objects == [{"kind": "Deployment", "namespace": "ci", "name": "runner"}]
	f.namespaces == ["ci"]
	"https://kubernetes.io/blog/2022/05/03/kubernetes-1-24-release-announcement/" in f.citations
	not f.objectsOmitted
}

test_removed_in_the_minor_after_the_target_is_a_warning if {
	f := only(judge(docker_socket([deployment("ci", "runner", ["/run/docker.sock"])]), "1.23"))
	f.severity == "warning"
	f.key == "removed-behaviour/docker-socket"
	f.title == "Workloads mount the Docker socket: removed in 1.24, the minor after 1.23 (1 object)"
}

test_deprecated_and_not_removed_soon_is_info_naming_the_removal if {
	f := only(judge(docker_socket([deployment("ci", "runner", ["/run/docker.sock"])]), "1.22"))
	f.severity == "info"
	f.key == "deprecated-behaviour/docker-socket"
	f.title == "Workloads mount the Docker socket: deprecated since 1.20, removal in 1.24 (1 object)"
}

test_before_its_deprecation_a_behaviour_has_no_finding if {
	count(judge(docker_socket([deployment("ci", "runner", ["/run/docker.sock"])]), "1.19")) == 0
}

test_a_deprecation_without_removal_is_info_at_every_later_target if {
	svc := {"kind": "Service", "namespace": "web", "name": "front", "values": ["10.0.0.7"]}
	facts := probes(observation("kb/service-load-balancer-ip", [svc], {}))
	f := only(judge(facts, "1.37"))
	f.key == "deprecated-behaviour/service-load-balancer-ip"
	f.title == "Services set spec.loadBalancerIP: deprecated since 1.24 (1 object)"
	count(judge(facts, "1.23")) == 0
}

# Every shipped entry, observed once, is judged at its boundary minors: blocker at the
# removal, warning the minor before, info (or nothing, before the deprecation) two before;
# an entry only deprecated is info from its deprecation and nothing the minor before.
test_every_entry_is_judged_at_its_boundary_minors if {
	wrong := {id | some id, e in kb.behaviours; not boundaries_hold(id, e)}
	wrong == set()
}

# An entry with a cap (maxSeverity) is judged within it: the master-only toleration is info at
# its removal. Entries are observed in files, where liveMaxSeverity caps nothing.
boundaries_hold(id, e) if {
	e.removed
	severities(id, e, e.removed.version) == cap(e, "blocker")
	r := versions.ordinal(e.removed.version)
	severities(id, e, versions.minor(r - 1)) == cap(e, "warning")
	severities(id, e, versions.minor(r - 2)) == before_removal(e, r - 2)
}

boundaries_hold(id, e) if {
	not e.removed
	severities(id, e, e.deprecated.version) == {"info"}
	severities(id, e, versions.minor(versions.ordinal(e.deprecated.version) - 1)) == set()
}

# Two minors before the removal an entry is a warning when no longer supported there, else
# info once deprecated.
before_removal(e, n) := cap(e, "warning") if versions.ordinal(e.unsupported.version) <= n

else := {"info"} if versions.ordinal(e.deprecated.version) <= n

else := set()

cap(e, s) := {e.maxSeverity} if {
	e.maxSeverity
	rank[e.maxSeverity] < rank[s]
} else := {s}

rank := {"info": 0, "warning": 1, "blocker": 2}

severities(id, e, t) := {f.severity |
	some f in judge(observed(e), t)
	endswith(f.key, sprintf("-behaviour/%s", [id]))
}

observed(e) := probes(observation(e.probe, [deployment("ns", "a", ["found"])], {})) if e.probe

observed(e) := {"inventory": {"source": "files", "nodes": [{
	"kubeletVersion": "v1.0.0", "containerRuntime": sprintf("%s://1.0.0", [e.nodeRuntime]),
	"count": 1, "names": ["node-1"],
}]}} if e.nodeRuntime

test_the_count_and_the_omitted_are_the_observations if {
	pv := {"kind": "PersistentVolume", "name": "data-0"}
	obs := observation("kb/pv-aws-ebs", [pv], {"count": 130, "objectsOmitted": 129})
	f := only(judge(probes(obs), "1.36"))
	f.key == "removed-behaviour/pv-aws-ebs"
	f.title == "PersistentVolumes use the AWS EBS in-tree volume plugin: removed in 1.27 (130 objects)"
	f.objects == [{"kind": "PersistentVolume", "name": "data-0"}]
	f.objectsOmitted == 129
	f.namespaces == []
}

test_objects_keep_their_kind_and_lose_what_was_found if {
	cron := {"group": "batch", "kind": "CronJob", "namespace": "ci", "name": "nightly", "values": ["/var/run/docker.sock"]}
	f := only(judge(docker_socket([deployment("ci", "runner", ["/var/run/docker.sock"]), cron]), "1.36"))
	f.objects == [
		{"kind": "Deployment", "namespace": "ci", "name": "runner"},
		{"kind": "CronJob", "namespace": "ci", "name": "nightly"},
	]
	f.detail == kb.behaviours["docker-socket"].detail
}

test_a_storage_class_observation_names_its_plugin if {
	sc := {"group": "storage.k8s.io", "kind": "StorageClass", "name": "gp2", "values": ["kubernetes.io/aws-ebs"]}
	obs := observation("kb/storageclass-aws-ebs", [sc], {})
	f := only(judge(probes(obs), "1.36"))
	f.key == "removed-behaviour/storageclass-aws-ebs"
	f.objects == [{"kind": "StorageClass", "name": "gp2"}]
}

test_an_objects_suppression_annotation_is_kept if {
	annotated := object.union(deployment("ci", "runner", ["/var/run/docker.sock"]), {"ignore": {"rules": "removed-behaviour", "reason": "kaniko next sprint"}})
	f := only(judge(docker_socket([annotated]), "1.36"))
	f.objects[0].ignore == {"rules": "removed-behaviour", "reason": "kaniko next sprint"}
}

test_an_absent_observation_has_no_finding if {
	count(judge({"facts": {"probes": {}}}, "1.36")) == 0
	count(judge({}, "1.36")) == 0
}

test_an_unavailable_observation_has_no_finding if {
	obs := observation("kb/pod-docker-socket", [deployment("ci", "runner", ["/var/run/docker.sock"])], {"available": false})
	count(judge(probes(obs), "1.36")) == 0
}

nodes(kubelet, runtime, names) := {"kubeletVersion": kubelet, "containerRuntime": runtime, "count": count(names), "names": names}

test_docker_nodes_with_a_kubelet_before_the_removal_are_a_blocker if {
	facts := {"inventory": {"nodes": [
		nodes("v1.23.4", "docker://20.10.7", ["old-1", "old-2"]),
		nodes("v1.24.1", "docker://20.10.7", ["dockerd-1"]),
		nodes("v1.23.4", "containerd://1.6.8", ["ctr-1"]),
	]}}
	f := only({f | some f in judge(facts, "1.36"); endswith(f.key, "/dockershim-nodes")})
	f.key == "removed-behaviour/dockershim-nodes"
	f.title == "Nodes run Docker Engine through the dockershim: removed in 1.24 (2 nodes)"
	f.objects == [{"kind": "Node", "name": "old-1"}, {"kind": "Node", "name": "old-2"}]
	f.detail == kb.behaviours["dockershim-nodes"].detail
}

test_docker_nodes_with_a_kubelet_at_or_after_the_removal_run_cri_dockerd if {
	facts := {"inventory": {"nodes": [nodes("v1.24.1", "docker://20.10.7", ["dockerd-1"])]}}
	count(judge(facts, "1.36")) == 0
}

test_nodes_beyond_the_listed_names_are_counted_as_omitted if {
	group := object.union(nodes("v1.22.9", "docker://20.10.7", ["old-1"]), {"count": 40, "namesOmitted": 39})
	f := only(judge({"inventory": {"nodes": [group]}}, "1.36"))
	f.title == "Nodes run Docker Engine through the dockershim: removed in 1.24 (40 nodes)"
	f.objectsOmitted == 39
}

test_nodes_past_the_limit_of_names_are_counted_as_omitted if {
	groups := [object.union(ctr("1.7.27", [sprintf("pool-%d-%03d", [p, i]) | some i in numbers.range(1, 100)]), {"count": 500, "namesOmitted": 400}) |
		some p in numbers.range(1, 4)
	]
	f := only(judge(runtimes(groups), "1.38"))
	count(f.objects) == 100
	f.objectsOmitted == 1900
	contains(f.title, "(2000 nodes)")
}

test_one_node_is_named_in_the_singular if {
	f := only(judge({"inventory": {"nodes": [nodes("v1.23.4", "docker://20.10.7", ["old-1"])]}}, "1.36"))
	contains(f.title, "(1 node)")
}

tolerations(objects) := probes(observation("kb/pod-master-toleration", objects, {}))

# A pod tolerating only the master taint cannot land on control plane nodes from 1.24 (kubeadm
# adds the control-plane taint), but it keeps running on workers: information at every target.
# Selecting the master label is what strands a pod, and stays a blocker.
test_tolerating_only_the_master_taint_is_information_at_every_target if {
	facts := tolerations([deployment("kubernetes-dashboard", "kubernetes-dashboard", ["node-role.kubernetes.io/master"])])
	f := only(judge(facts, "1.24"))
	f.key == "removed-behaviour/master-taint-toleration"
	f.severity == "info"
	f.title == "Workloads tolerate the node-role.kubernetes.io/master taint only: removed in 1.24 (1 object)"
	only(judge(facts, "1.23")).severity == "info"
	only(judge(facts, "1.22")).key == "deprecated-behaviour/master-taint-toleration"
}

test_selecting_the_master_label_stays_a_blocker if {
	facts := probes(observation("kb/pod-node-selector-master", [deployment("ingress-nginx", "ingress-nginx-controller", ["true"])], {}))
	f := only(judge(facts, "1.24"))
	f.key == "removed-behaviour/master-label-node-selector"
	f.severity == "blocker"
}

runtimes(groups) := {"inventory": {"source": "cluster", "nodes": groups}}

ctr(version, names) := nodes("v1.35.2", sprintf("containerd://%s", [version]), names)

# containerd 1.x: deprecated at 1.34, unsupported from 1.36 (1.35 the last release supporting
# it), the kubelet's fallback removed at 1.38.
test_containerd_1_nodes_are_judged_at_every_boundary if {
	facts := runtimes([ctr("1.7.27", ["a-1", "a-2"]), ctr("2.0.4", ["b-1"]), ctr("v1.6.21-k3s1", ["c-1"])])
	f := only(judge(facts, "1.38"))
	f.key == "removed-behaviour/containerd-without-runtime-config"
	f.severity == "blocker"
	f.title == "Nodes run containerd 1.x, which cannot tell the kubelet its cgroup driver: removed in 1.38 (3 nodes)"
	f.objects == [{"kind": "Node", "name": "a-1"}, {"kind": "Node", "name": "a-2"}, {"kind": "Node", "name": "c-1"}]
	only(judge(facts, "1.37")).severity == "warning"
	u := only(judge(facts, "1.36"))
	u.severity == "warning"
	u.key == "deprecated-behaviour/containerd-without-runtime-config"
	u.title == "Nodes run containerd 1.x, which cannot tell the kubelet its cgroup driver: unsupported since 1.36, removal in 1.38 (3 nodes)"
	only(judge(facts, "1.35")).severity == "info"
	count(judge(facts, "1.33")) == 0
}

test_a_runtime_version_bound_looks_at_the_runtime_not_the_kubelet if {
	old_kubelet := nodes("v1.29.0", "containerd://1.7.2", ["old"])
	only(judge(runtimes([old_kubelet]), "1.38")).objects == [{"kind": "Node", "name": "old"}]
	count(judge(runtimes([ctr("2.1.0", ["new"]), nodes("v1.35.0", "containerd://unknown", ["odd"])]), "1.38")) == 0
}

test_cri_o_before_1_28_is_judged_like_containerd_1 if {
	facts := runtimes([nodes("v1.27.3", "cri-o://1.27.1", ["crio-1"]), nodes("v1.35.0", "cri-o://1.35.0", ["crio-2"])])
	f := only(judge(facts, "1.38"))
	f.key == "removed-behaviour/crio-without-runtime-config"
	f.objects == [{"kind": "Node", "name": "crio-1"}]
}

service(ns, name, values) := {"kind": "Service", "namespace": ns, "name": name, "values": values}

strict(id, objects, values, source) := object.union(
	probes(observation(id, objects, {"probe": {"strictInvalid": "ip"}, "values": values})),
	{"inventory": {"source": source}},
)

# A manifest the target's strict validation refuses is a blocker in CI; a live object keeps
# its value through updates that leave the field alone, so live it is a warning.
test_an_ip_the_target_refuses_is_a_blocker_in_files_and_a_warning_live if {
	objs := [service("web", "legacy", ["010.0.0.1"])]
	values := [{"value": "010.0.0.1", "count": 1}]
	files := only(judge(strict("kb/service-external-ips-strict", objs, values, "files"), "1.36"))
	files.severity == "blocker"
	files.key == "removed-behaviour/service-external-ips-strict"
	endswith(files.detail, " Refused values: 010.0.0.1.")
	live := only(judge(strict("kb/service-external-ips-strict", objs, values, "cluster"), "1.36"))
	live.severity == "warning"
	live.key == "removed-behaviour/service-external-ips-strict"
	only(judge(strict("kb/service-external-ips-strict", objs, values, "cluster"), "1.35")).severity == "warning"
	only(judge(strict("kb/service-external-ips-strict", objs, values, "files"), "1.34")).severity == "info"
}

test_a_pod_template_the_target_refuses_is_a_blocker_live_too if {
	objs := [deployment("kube-system", "dns-cache", ["010.096.000.010"])]
	f := only(judge(strict("kb/pod-dns-nameserver-strict", objs, [{"value": "010.096.000.010", "count": 1}], "cluster"), "1.36"))
	f.severity == "blocker"
}

test_many_refused_values_are_named_up_to_the_limit_and_counted if {
	values := [{"value": sprintf("10.0.0.%03d", [i]), "count": 1} | some i in numbers.range(1, 25)]
	obs := observation(
		"kb/service-external-ips-strict", [service("web", "many", ["10.0.0.001"])],
		{"probe": {"strictInvalid": "ip"}, "values": values, "valuesOmitted": 4},
	)
	f := only(judge(object.union(probes(obs), {"inventory": {"source": "files"}}), "1.36"))
	endswith(f.detail, ", 10.0.0.020 and 9 more.")
}

test_values_of_probes_not_about_refused_values_are_not_named if {
	f := only(judge(docker_socket([deployment("ci", "runner", ["/var/run/docker.sock"])]), "1.36"))
	not contains(f.detail, "Refused values")
}
