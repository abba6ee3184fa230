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

boundaries_hold(id, e) if {
	e.removed
	severities(id, e, e.removed.version) == {"blocker"}
	r := versions.ordinal(e.removed.version)
	severities(id, e, versions.minor(r - 1)) == {"warning"}
	severities(id, e, versions.minor(r - 2)) == info_at(e, r - 2)
}

boundaries_hold(id, e) if {
	not e.removed
	severities(id, e, e.deprecated.version) == {"info"}
	severities(id, e, versions.minor(versions.ordinal(e.deprecated.version) - 1)) == set()
}

info_at(e, n) := {"info"} if versions.ordinal(e.deprecated.version) <= n

else := set()

severities(id, e, t) := {f.severity |
	some f in judge(observed(e), t)
	endswith(f.key, sprintf("-behaviour/%s", [id]))
}

observed(e) := probes(observation(e.probe, [deployment("ns", "a", ["found"])], {})) if e.probe

observed(e) := {"inventory": {"nodes": [{
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
	f := only(judge(facts, "1.36"))
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

test_one_node_is_named_in_the_singular if {
	f := only(judge({"inventory": {"nodes": [nodes("v1.23.4", "docker://20.10.7", ["old-1"])]}}, "1.36"))
	contains(f.title, "(1 node)")
}

tolerations(objects) := probes(observation("kb/pod-master-toleration", objects, {}))

# The master-only toleration breaks when kubeadm adds the control-plane taint (1.24), not when
# it drops the master taint (1.25).
test_tolerating_only_the_master_taint_is_a_blocker_from_1_24 if {
	facts := tolerations([deployment("ops", "old-only", ["node-role.kubernetes.io/master"])])
	only(judge(facts, "1.24")).severity == "blocker"
	only(judge(facts, "1.23")).severity == "warning"
}
