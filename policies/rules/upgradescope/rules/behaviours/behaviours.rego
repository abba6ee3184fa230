# METADATA
# title: Removed and deprecated behaviours
# description: |
#   Judges the knowledge base's behaviours (kb.behaviours: an in-tree volume plugin, the
#   dockershim, a label kubeadm stopped applying, an annotation the kubelet ignores, a
#   container runtime too old for the kubelet, an IP the API server now refuses) against what
#   the probes observed (input.facts.probes) and the nodes' container runtimes: removed at or
#   before the target is a blocker, removed in the minor after the target or no longer
#   supported at it a warning, deprecated at or before the target otherwise info. An entry may
#   cap the severity (maxSeverity), or cap it for a live cluster (liveMaxSeverity), where
#   what relies on the behaviour keeps working. A behaviour whose observation is absent has no
#   finding here; the report turns a missing observation into a not-assessed gap.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-policy/
# custom:
#   category: removed-behaviour, deprecated-behaviour
package upgradescope.rules.behaviours

import data.upgradescope.kb
import data.upgradescope.lib.versions

# METADATA
# custom:
#   families:
#     - id: in-tree-volumes-csi-migrated
#       title: Volumes of in-tree plugins whose operations now go to a CSI driver
#       category: removed-behaviour
#       reads:
#         - "pod templates: spec.volumes[*].<plugin>"
#         - "PersistentVolumes: spec.<plugin>"
#         - "StorageClasses: provisioner kubernetes.io/<plugin>"
#       capabilities:
#         - probes/kb/pod-volume-aws-ebs
#         - probes/kb/pod-volume-azure-disk
#         - probes/kb/pod-volume-azure-file
#         - probes/kb/pod-volume-cinder
#         - probes/kb/pod-volume-gce-pd
#         - probes/kb/pod-volume-portworx
#         - probes/kb/pod-volume-vsphere
#         - probes/kb/pv-aws-ebs
#         - probes/kb/pv-azure-disk
#         - probes/kb/pv-azure-file
#         - probes/kb/pv-cinder
#         - probes/kb/pv-gce-pd
#         - probes/kb/pv-portworx
#         - probes/kb/pv-vsphere
#         - probes/kb/storageclass-aws-ebs
#         - probes/kb/storageclass-azure-disk
#         - probes/kb/storageclass-azure-file
#         - probes/kb/storageclass-cinder
#         - probes/kb/storageclass-gce-pd
#         - probes/kb/storageclass-portworx
#         - probes/kb/storageclass-vsphere
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it. Removed plugins (AWS EBS, Azure Disk and File, Cinder, GCE PD, Portworx, vSphere)
#         redirect every operation to their CSI driver: the volumes keep working only where it is
#         installed, which the inventory does not show.
#       citations:
#         - https://kubernetes.io/docs/concepts/storage/volumes/
#         - https://github.com/kubernetes/website/blob/d239a6ba6aa55308acb4cd2a62beee383039a71d/content/en/docs/reference/storage/volume-types.md
#     - id: volume-plugins-without-migration
#       title: Volumes of plugins removed with no migration path, FlexVolume and gitRepo
#       category: removed-behaviour
#       reads:
#         - "pod templates: spec.volumes[*].<plugin>"
#         - "PersistentVolumes: spec.<plugin>"
#         - "StorageClasses: provisioner kubernetes.io/<plugin>"
#       capabilities:
#         - probes/kb/pod-volume-cephfs
#         - probes/kb/pod-volume-flexvolume
#         - probes/kb/pod-volume-flocker
#         - probes/kb/pod-volume-git-repo
#         - probes/kb/pod-volume-glusterfs
#         - probes/kb/pod-volume-quobyte
#         - probes/kb/pod-volume-rbd
#         - probes/kb/pod-volume-storageos
#         - probes/kb/pv-cephfs
#         - probes/kb/pv-flexvolume
#         - probes/kb/pv-flocker
#         - probes/kb/pv-glusterfs
#         - probes/kb/pv-quobyte
#         - probes/kb/pv-rbd
#         - probes/kb/pv-storageos
#         - probes/kb/storageclass-glusterfs
#         - probes/kb/storageclass-quobyte
#         - probes/kb/storageclass-rbd
#         - probes/kb/storageclass-storageos
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it. CephFS, Ceph RBD, GlusterFS, Flocker, Quobyte and StorageOS volumes stop working
#         (pods using them cannot start) and gitRepo volumes need the GitRepoVolumeDriver gate from 1.33;
#         FlexVolume is deprecated only.
#       citations:
#         - https://kubernetes.io/docs/concepts/storage/volumes/
#         - https://github.com/kubernetes/website/blob/d239a6ba6aa55308acb4cd2a62beee383039a71d/content/en/docs/reference/storage/volume-types.md
#         - https://kubernetes.io/blog/2024/08/13/kubernetes-v1-31-release/
#         - https://kubernetes.io/blog/2025/04/23/kubernetes-v1-33-release/
#     - id: dockershim-nodes
#       title: Nodes that run Docker Engine through the dockershim
#       category: removed-behaviour
#       reads:
#         - "inventory.nodes (containerRuntime, kubeletVersion)"
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it. Only nodes whose kubelet is older than 1.24 rely on the dockershim; a newer kubelet
#         reporting docker reaches it through cri-dockerd.
#       citations:
#         - https://kubernetes.io/blog/2022/05/03/kubernetes-1-24-release-announcement/
#         - https://kubernetes.io/docs/tasks/administer-cluster/migrating-from-dockershim/migrate-dockershim-dockerd/
#     - id: docker-socket-mounts
#       title: Workloads that mount the Docker socket
#       category: removed-behaviour
#       reads:
#         - "pod templates: spec.volumes[*].hostPath.path"
#       capabilities: [probes/kb/pod-docker-socket]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it.
#       citations:
#         - https://kubernetes.io/docs/tasks/administer-cluster/migrating-from-dockershim/check-if-dockershim-removal-affects-you/
#         - https://kubernetes.io/blog/2022/05/03/kubernetes-1-24-release-announcement/
#     - id: kubeadm-master-role
#       title: "Workloads that rely on kubeadm's node-role.kubernetes.io/master label or taint"
#       category: removed-behaviour
#       reads:
#         - "pod templates: spec.nodeSelector, required node affinity, spec.tolerations"
#       capabilities: [probes/kb/pod-master-node-affinity, probes/kb/pod-master-toleration, probes/kb/pod-node-selector-master]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it. kubeadm stopped labelling control-plane nodes node-role.kubernetes.io/master in
#         1.24 and tainting them with it in 1.25: a pod that selects or requires the label is judged so,
#         one that only tolerates the old taint is info at most (maxSeverity), since it keeps running on
#         workers.
#       citations:
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.24.md
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.25.md
#     - id: security-profile-annotations
#       title: Seccomp and AppArmor profiles set with annotations instead of fields
#       category: deprecated-behaviour
#       reads:
#         - "pod templates: metadata.annotations"
#       capabilities: [probes/kb/pod-apparmor-annotations, probes/kb/pod-seccomp-annotation, probes/kb/pod-seccomp-container-annotations]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it. The seccomp annotations are deprecated since 1.19 (the kubelet ignores them since
#         1.25), the AppArmor ones since 1.30.
#       citations:
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.25.md
#         - https://kubernetes.io/docs/tutorials/security/apparmor/
#     - id: ingress-class-annotation
#       title: Ingresses that choose their class with the kubernetes.io/ingress.class annotation
#       category: deprecated-behaviour
#       reads:
#         - "Ingresses: metadata.annotations"
#       capabilities: [probes/kb/ingress-class-annotation]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it.
#       citations:
#         - https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-ingress-class-deprecated
#     - id: service-load-balancer-ip
#       title: Services that set spec.loadBalancerIP
#       category: deprecated-behaviour
#       reads:
#         - "Services: spec.loadBalancerIP"
#       capabilities: [probes/kb/service-load-balancer-ip]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target is at or past the entry's removal; warning when the removal is the minor
#         after the target; info when it is deprecated at or before the target and not removed within a
#         minor of it.
#       citations:
#         - https://kubernetes.io/docs/concepts/services-networking/service/#loadbalancer

# METADATA
# description: |
#   One finding per behaviour and target, listing the objects (or nodes) that rely on it.
#   Entries are few and each names its observation, so the join is a key lookup per entry.
# scope: document
# custom:
#   families:
#     - id: runtime-without-cgroup-driver-lookup
#       title: Nodes whose container runtime cannot tell the kubelet its cgroup driver
#       category: removed-behaviour
#       reads: ["inventory.nodes (containerRuntime)"]
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker from 1.38, where the kubelet refuses to start on a runtime without the CRI
#         RuntimeConfig call (containerd before 2.0, CRI-O before 1.28); warning at 1.37 (the minor
#         before) and, for containerd 1.x, at 1.36 (unsupported after 1.35, though the kubelet still
#         falls back to its own cgroupDriver); info from 1.34, where it was deprecated. The runtime's
#         version decides, whatever the node's kubelet.
#       citations:
#         - https://github.com/kubernetes/enhancements/blob/master/keps/sig-node/4033-group-driver-detection-over-cri/README.md
#         - https://kubernetes.io/blog/2025/09/12/kubernetes-v1-34-cri-cgroup-driver-lookup-now-ga/
#         - https://kubernetes.io/blog/2025/11/26/kubernetes-v1-35-sneak-peek/
#         - https://github.com/kubernetes/kubernetes/blob/v1.37.0/cmd/kubelet/app/server.go
#     - id: ip-cidr-strict-validation
#       title: IPs and CIDRs that only the legacy validation accepts
#       category: removed-behaviour
#       reads:
#         - "Services: spec.clusterIP, spec.externalIPs[*], spec.loadBalancerSourceRanges[*]"
#         - "NetworkPolicies: ipBlock.cidr, ipBlock.except[*]"
#         - "Endpoints and EndpointSlices: addresses"
#         - "pod templates: spec.dnsConfig.nameservers[*], spec.hostAliases[*].ip"
#       capabilities:
#         - probes/kb/endpoints-ip-strict
#         - probes/kb/endpointslice-address-strict
#         - probes/kb/networkpolicy-cidr-strict
#         - probes/kb/networkpolicy-except-strict
#         - probes/kb/pod-dns-nameserver-strict
#         - probes/kb/pod-host-alias-strict
#         - probes/kb/service-cluster-ip-strict
#         - probes/kb/service-external-ips-strict
#         - probes/kb/service-source-ranges-strict
#       modes: [files, cluster]
#       severity: >-
#         blocker at targets from 1.36, where StrictIPCIDRValidation is on by default and refuses
#         IPv4 leading zeros, IPv4-mapped IPv6 and CIDRs with host bits, for manifests (files) and for
#         pod templates live (every new Pod is validated); warning live for Services, NetworkPolicies,
#         Endpoints and EndpointSlices, which keep the values updates leave unchanged; warning at 1.35;
#         info from the warnings' minor (1.27 for Services, 1.33 for the rest). The finding names the
#         refused values.
#       citations:
#         - https://github.com/kubernetes/enhancements/blob/master/keps/sig-network/4858-ip-cidr-validation/README.md
#         - https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/features/kube_features.go
#     - id: service-external-ips
#       title: Services that set spec.externalIPs
#       category: deprecated-behaviour
#       reads: ["Services: spec.externalIPs[*]"]
#       capabilities: [probes/kb/service-external-ips]
#       modes: [files, cluster]
#       severity: >-
#         info at targets from 1.36, where spec.externalIPs is deprecated; KEP-5707's removal from
#         kube-proxy is tentative and not claimed.
#       citations:
#         - https://github.com/kubernetes/enhancements/blob/master/keps/sig-network/5707-deprecate-service-externalips/README.md
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.36.md
#     - id: service-traffic-distribution-prefer-close
#       title: Services that set trafficDistribution PreferClose
#       category: deprecated-behaviour
#       reads: ["Services: spec.trafficDistribution"]
#       capabilities: [probes/kb/service-traffic-distribution-prefer-close]
#       modes: [files, cluster]
#       severity: info at targets from 1.35, where PreferClose is deprecated for PreferSameZone; no removal is announced.
#       citations:
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.35.md
#         - https://github.com/kubernetes/kubernetes/blob/v1.35.0/pkg/api/service/warnings.go
findings contains f if {
	some id, e in kb.behaviours
	u := usage(e)
	u.count > 0
	some t in input.targets
	[category, judged, status] := judgement(e, t)
	f := finding(id, e, t, category, capped(e, judged), status, u)
}

judgement(e, t) := ["removed-behaviour", "blocker", sprintf("removed in %s", [e.removed.version])] if {
	versions.ordinal(t) >= versions.ordinal(e.removed.version)
}

judgement(e, t) := ["removed-behaviour", "warning", status] if {
	versions.ordinal(e.removed.version) == versions.ordinal(t) + 1
	status := sprintf("removed in %s, the minor after %s", [e.removed.version, t])
}

judgement(e, t) := ["deprecated-behaviour", "warning", status] if {
	versions.ordinal(e.unsupported.version) <= versions.ordinal(t)
	not removal_in_window(e, t)
	status := sprintf("unsupported since %s, removal in %s", [e.unsupported.version, e.removed.version])
}

judgement(e, t) := ["deprecated-behaviour", "info", status] if {
	versions.ordinal(e.deprecated.version) <= versions.ordinal(t)
	not removal_in_window(e, t)
	not unsupported_at(e, t)
	status := concat("", [sprintf("deprecated since %s", [e.deprecated.version]), removal_phrase(e)])
}

unsupported_at(e, t) if versions.ordinal(e.unsupported.version) <= versions.ordinal(t)

removal_in_window(e, t) if versions.ordinal(e.removed.version) <= versions.ordinal(t) + 1

removal_phrase(e) := sprintf(", removal in %s", [e.removed.version]) if e.removed

else := ""

# capped is the judged severity within the entry's caps: maxSeverity wherever the objects
# were seen, liveMaxSeverity for a live cluster, whose objects keep what an update leaves.
capped(e, judged) := severity_names[min({severity_rank[s] | some s in caps(e, judged)})]

caps(e, judged) := {judged, object.get(e, "maxSeverity", judged), live_cap(e, judged)}

live_cap(e, judged) := e.liveMaxSeverity if input.inventory.source == "cluster"

else := judged

severity_rank := {"info": 0, "warning": 1, "blocker": 2}

severity_names := ["info", "warning", "blocker"]

# usage is what relies on the behaviour: the objects listed, how many there are in all, and
# how many of them are not listed.
usage(e) := u if {
	obs := input.facts.probes[e.probe]
	obs.available
	obs.count > 0
	u := probe_usage(obs)
}

usage(e) := {"objects": objects, "count": total, "omitted": total - count(objects)} if {
	e.nodeRuntime
	groups := [g | some g in object.get(input.inventory, "nodes", []); runs_removed_runtime(e, g)]
	names := [n | some g in groups; some n in g.names]
	objects := [{"kind": "Node", "name": n} | some n in array.slice(names, 0, max_nodes)]
	total := sum([g.count | some g in groups])
}

# A finding names at most max_nodes nodes, as probe observations list at most so many objects;
# the others are counted.
max_nodes := 100

# A node group relies on the behaviour when it runs the runtime with a kubelet older than the
# removal: a newer kubelet reporting the runtime reaches it another way (cri-dockerd for docker).
# An entry bounding the runtime's version (runtimeBefore) is about the runtime the upgraded
# kubelet will meet: a group relies on it when its runtime is older, whatever its kubelet. A
# runtime version that does not parse is not judged here (the add-ons pack names it).
runs_removed_runtime(e, g) if {
	not e.runtimeBefore
	split(g.containerRuntime, "://")[0] == e.nodeRuntime
	versions.ordinal(g.kubeletVersion) < versions.ordinal(e.removed.version)
}

runs_removed_runtime(e, g) if {
	[name, version] := split(g.containerRuntime, "://")
	name == e.nodeRuntime
	versions.ordinal(version) < versions.ordinal(e.runtimeBefore)
}

# Every object the probe matched relies on the behaviour: a probe about some values only
# (equals, prefixes, unless, strictInvalid) is filtered by the collector, so its count is
# exact. The values of a strictInvalid probe are what to fix, so the finding names them.
probe_usage(obs) := object.union(
	{"objects": listed, "count": obs.count, "omitted": object.get(obs, "objectsOmitted", 0)},
	refused_values(obs),
) if {
	listed := [ref(o) | some o in object.get(obs, "objects", [])]
}

refused_values(obs) := {"values": [v.value | some v in object.get(obs, "values", [])], "valuesOmitted": object.get(obs, "valuesOmitted", 0)} if {
	obs.probe.strictInvalid
} else := {}

values_phrase(u) := sprintf(" Refused values: %s.", [listed_values(u.values, u.valuesOmitted)]) if {
	count(u.values) > 0
} else := ""

# At most max_values values are named; the rest are counted.
listed_values(values, omitted) := concat(", ", values) if {
	count(values) <= max_values
	omitted == 0
} else := sprintf("%s and %d more", [concat(", ", array.slice(values, 0, max_values)), (count(values) - min([count(values), max_values])) + omitted])

max_values := 20

# ref is an observed object as findings list objects, with its kind: a probe of pod
# templates spans Deployments, CronJobs and Pods.
ref(o) := object.filter(o, ["kind", "namespace", "name", "file", "line", "renderedFrom", "ignore"])

finding(id, e, t, category, severity, status, u) := object.union(
	{
		"key": sprintf("%s/%s", [category, id]),
		"category": category,
		"severity": severity,
		"target": t,
		"title": sprintf("%s: %s (%s)", [e.title, status, count_phrase(e, u.count)]),
		"detail": concat("", [e.detail, values_phrase(u)]),
		"remediation": e.remediation,
		"objects": u.objects,
		"namespaces": sort({ns | some o in u.objects; ns := object.get(o, "namespace", ""); ns != ""}),
		"citations": e.citations,
	},
	omitted(u.omitted),
)

omitted(n) := {"objectsOmitted": n} if n > 0

else := {}

count_phrase(e, 1) := "1 node" if e.nodeRuntime

count_phrase(e, n) := sprintf("%d nodes", [n]) if {
	e.nodeRuntime
	n != 1
}

count_phrase(e, 1) := "1 object" if not e.nodeRuntime

count_phrase(e, n) := sprintf("%d objects", [n]) if {
	not e.nodeRuntime
	n != 1
}
