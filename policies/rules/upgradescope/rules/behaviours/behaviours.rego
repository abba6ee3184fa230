# METADATA
# title: Removed and deprecated behaviours
# description: |
#   Judges the knowledge base's behaviours (kb.behaviours: an in-tree volume plugin, the
#   dockershim, a label kubeadm stopped applying, an annotation the kubelet ignores) against
#   what the probes observed (input.facts.probes) and the nodes' container runtimes: removed
#   at or before the target is a blocker, removed in the minor after the target a warning,
#   deprecated at or before the target otherwise info. A behaviour whose observation is absent
#   has no finding here; the report turns a missing observation into a not-assessed gap.
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
#         1.24 and stopped tainting them with it in 1.25.
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
findings contains f if {
	some id, e in kb.behaviours
	u := usage(e)
	u.count > 0
	some t in input.targets
	[category, severity, status] := judgement(e, t)
	f := finding(id, e, t, category, severity, status, u)
}

judgement(e, t) := ["removed-behaviour", "blocker", sprintf("removed in %s", [e.removed.version])] if {
	versions.ordinal(t) >= versions.ordinal(e.removed.version)
}

judgement(e, t) := ["removed-behaviour", "warning", status] if {
	versions.ordinal(e.removed.version) == versions.ordinal(t) + 1
	status := sprintf("removed in %s, the minor after %s", [e.removed.version, t])
}

judgement(e, t) := ["deprecated-behaviour", "info", status] if {
	versions.ordinal(e.deprecated.version) <= versions.ordinal(t)
	not removal_in_window(e, t)
	status := concat("", [sprintf("deprecated since %s", [e.deprecated.version]), removal_phrase(e)])
}

removal_in_window(e, t) if versions.ordinal(e.removed.version) <= versions.ordinal(t) + 1

removal_phrase(e) := sprintf(", removal in %s", [e.removed.version]) if e.removed

else := ""

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
	objects := [{"kind": "Node", "name": n} | some g in groups; some n in g.names]
	total := sum([g.count | some g in groups])
}

# A node group relies on the behaviour when it runs the runtime with a kubelet older than the
# removal: a newer kubelet reporting the runtime reaches it another way (cri-dockerd for docker).
runs_removed_runtime(e, g) if {
	split(g.containerRuntime, "://")[0] == e.nodeRuntime
	versions.ordinal(g.kubeletVersion) < versions.ordinal(e.removed.version)
}

# Every object the probe matched relies on the behaviour: a probe about some values only
# (equals, prefixes, unless) is filtered by the collector, so its count is exact.
probe_usage(obs) := {"objects": listed, "count": obs.count, "omitted": object.get(obs, "objectsOmitted", 0)} if {
	listed := [ref(o) | some o in object.get(obs, "objects", [])]
}

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
		"detail": e.detail,
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
