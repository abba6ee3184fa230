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
