# METADATA
# title: Node runtime and OS facts the target drops
# description: |
#   What the target's node components refuse on the nodes they run on: a cgroup v1 node,
#   where the kubelet no longer starts by default (kb.nodes.cgroupV1), and kube-proxy's ipvs
#   mode, deprecated and planned to be turned off (kb.nodes.kubeProxyIPVS). Reads the nodes'
#   operating systems (input.inventory.preflight.nodeState.systems), the kubelets'
#   configuration and kube-proxy's mode (input.inventory.preflight.components). Live only for
#   the nodes; without the section there is no finding, and the report shows the gap. Container
#   runtimes too old for the target's kubelet are behaviours (containerd-without-runtime-config).
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/architecture/cgroups/
#   - ref: https://github.com/kubernetes/enhancements/blob/master/keps/sig-network/5495-deprecate-ipvs-mode-in-kube-proxy/README.md
# custom:
#   category: node-runtime
package upgradescope.rules.noderuntime

import data.upgradescope.kb
import data.upgradescope.lib.versions

cgroup := kb.nodes.cgroupV1

ipvs := kb.nodes.kubeProxyIPVS

systems := object.get(input.inventory, ["preflight", "nodeState", "systems"], [])

components := object.get(input.inventory, ["preflight", "components"], [])

stat_hint := "Check a node with stat -fc %T /sys/fs/cgroup/: cgroup2fs is cgroup v2, tmpfs is cgroup v1."

# METADATA
# title: Nodes on cgroup v1, which the target's kubelet refuses
# description: |
#   From 1.35 the kubelet refuses to start on a cgroup v1 node unless its configuration sets
#   failCgroupV1: false. It checks the cgroup mode the node booted, not its kernel, and node
#   status shows neither, so the evidence is what it does show: an OS image whose release
#   boots cgroup v1 by default on a kernel older than Kubernetes supports cgroup v2 on (cgroup
#   v1 unless switched to an unsupported cgroup v2), such a release on a newer kernel (likely),
#   or an old kernel alone (some releases, RHEL 8's 4.18 among them, can boot cgroup v2 on one).
#   A kubelet configuration read live (configz) is the
#   effective one, defaults included, so failCgroupV1: false only says something about a
#   kubelet at or past 1.35. One finding per evidence and target, naming the nodes.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/architecture/cgroups/
#   - ref: https://github.com/kubernetes/enhancements/blob/master/keps/sig-node/5573-remove-cgroup-v1/README.md
# custom:
#   families:
#     - id: node-cgroup-v1
#       title: Nodes on cgroup v1, which the target's kubelet refuses
#       category: node-runtime
#       reads: [preflight.nodeState.systems, preflight.components (kubelet failCgroupV1)]
#       capabilities: [node-state, kubelet-config]
#       modes: [cluster]
#       severity: >-
#         At targets from 1.35, for nodes whose kubelet is older than 1.35: blocker when their OS
#         release boots cgroup v1 by default (Ubuntu before 21.10, Debian before 11, Fedora before
#         31, RHEL-like before 9, Amazon Linux 2) and their kernel is older than 5.8, the oldest
#         Kubernetes supports cgroup v2 on; warning, saying how to verify, when only one holds:
#         such a release on a newer kernel (it may have been switched to cgroup v2), or an old
#         kernel under another release (the kubelet checks the cgroup mode, not the kernel, and
#         some releases boot cgroup v2 on one). A
#         failCgroupV1: false such a kubelet reports is its version's default and spares nothing.
#         Nodes whose kubelet is 1.35 or later started: info for those with either evidence whose
#         kubelet reports failCgroupV1: false (cgroup v1, deprecated), nothing for the others.
#         Windows nodes are not judged.
#       citations:
#         - https://github.com/kubernetes/enhancements/blob/master/keps/sig-node/5573-remove-cgroup-v1/README.md
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.35.md
#         - https://kubernetes.io/docs/concepts/architecture/cgroups/
#         - https://docs.aws.amazon.com/linux/al2023/ug/cgroupv2.html
findings contains f if {
	some t in input.targets
	versions.ordinal(t) >= versions.ordinal(cgroup.refused.version)
	some evidence in ["os-image-old-kernel", "kernel", "os-image"]
	some allowed in [false, true]
	flagged := [i | some i, e in evidence_of; e == evidence; split_nodes[i][allowed].count > 0]
	count(flagged) > 0
	f := cgroup_finding(t, evidence, allowed, flagged)
}

# METADATA
# title: kube-proxy in ipvs mode
# description: |
#   kube-proxy's ipvs mode is deprecated since 1.35; KEP-5495 plans its KubeProxyIPVS gate
#   to turn it off by default at 1.40 (kube-proxy then exits unless the gate is enabled) and
#   to remove it at 1.43. One finding per kube-proxy configuration in ipvs mode and target.
# related_resources:
#   - ref: https://github.com/kubernetes/enhancements/blob/master/keps/sig-network/5495-deprecate-ipvs-mode-in-kube-proxy/README.md
# custom:
#   families:
#     - id: kube-proxy-ipvs
#       title: kube-proxy in ipvs mode
#       category: node-runtime
#       reads: [preflight.components (kube-proxy proxyMode, featureGates)]
#       capabilities: [component-flags]
#       modes: [files, cluster]
#       severity: >-
#         warning at targets from 1.35, where ipvs mode is deprecated; blocker from 1.40, where
#         KEP-5495 plans the KubeProxyIPVS gate off by default and kube-proxy exits in ipvs mode,
#         unless kube-proxy enables the gate (then a warning until 1.43, where the KEP plans the
#         mode's removal, and a blocker from it).
#       citations:
#         - https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.35.md
#         - https://github.com/kubernetes/enhancements/blob/master/keps/sig-network/5495-deprecate-ipvs-mode-in-kube-proxy/README.md
findings contains f if {
	some c in components
	c.component == "kube-proxy"
	c.proxyMode == ipvs.mode
	some t in input.targets
	[severity, status, citations] := ipvs_judgement(c, t)
	f := {
		"key": concat("/", [p | some p in ["node-runtime/kube-proxy-ipvs", c.object.kind, object.get(c.object, "namespace", ""), c.object.name]; p != ""]),
		"category": "node-runtime",
		"severity": severity,
		"target": t,
		"title": sprintf("kube-proxy runs in ipvs mode (%s %s): %s", [c.object.kind, object_name(c.object), status]),
		"detail": concat(" ", [
			"kube-proxy's ipvs mode is deprecated since 1.35 and KEP-5495 plans its end: the KubeProxyIPVS feature gate",
			"(from 1.37) turns off by default at 1.40, when kube-proxy in ipvs mode exits with an error unless the gate is",
			"enabled, and the mode is removed at 1.43. nftables mode (GA since 1.33) is its replacement on Linux.",
		]),
		"remediation": "Move kube-proxy to nftables mode (it needs Linux 5.13 or later) or to iptables mode, a node pool at a time.",
		"objects": [object.filter(c.object, ["kind", "namespace", "name", "file", "line"])],
		"namespaces": [ns | ns := object.get(c.object, "namespace", ""); ns != ""],
		"citations": citations,
	}
}

# evidence_of is what each node system (by its index) shows of running cgroup v1, and
# split_nodes its nodes split by whether their kubelet allows cgroup v1; each is computed once
# per query, and rules walk indices, not systems (OPA hashes a function's arguments).
evidence_of[i] := cgroup_v1_evidence(s) if some i, s in systems

split_nodes[i] := {false: judged_nodes(systems[i]), true: none} if {
	some i, _ in evidence_of
	not started_past_refusal(systems[i])
}

split_nodes[i] := {false: none, true: allowed_of(systems[i])} if {
	some i, _ in evidence_of
	started_past_refusal(systems[i])
}

none := {"names": [], "count": 0}

# cgroup_v1_evidence is what a group of nodes shows of running cgroup v1: an OS image whose
# release boots cgroup v1 by default on a kernel too old for cgroup v2, else a kernel too old
# alone, else such an OS image alone. Nodes whose kubelet already runs at or past the refusal
# started on what they run; Windows nodes have no cgroups.
cgroup_v1_evidence(s) := "os-image-old-kernel" if {
	judged_system(s)
	old_kernel(s)
	boots_cgroup_v1(s)
} else := "kernel" if {
	judged_system(s)
	old_kernel(s)
} else := "os-image" if {
	judged_system(s)
	boots_cgroup_v1(s)
}

old_kernel(s) if versions.ordinal(s.kernelVersion) < versions.ordinal(cgroup.kernel.minimum)

boots_cgroup_v1(s) if {
	some image in cgroup.osImages
	release(os_release(image, s.osImage)) < release(image.cgroupV2From)
}

judged_system(s) if not regex.match(`(?i)^windows`, s.osImage)

# A kubelet at or past the refusal started on what its node runs: cgroup v2, or cgroup v1
# because its configuration sets failCgroupV1: false (its default is true there).
started_past_refusal(s) if versions.ordinal(s.kubeletVersion) >= versions.ordinal(cgroup.refused.version)

os_release(image, os_image) := regex.find_all_string_submatch_n(image.match, os_image, 1)[0][1]

release(v) := [to_number(p) | some p in split(v, ".")]

# judged_nodes are a group's nodes: the kubelet the upgrade brings refuses them. A
# failCgroupV1: false their kubelets report does not spare them: before 1.35 it is the
# default, which the new kubelet does not keep, and the report cannot tell it from a setting.
judged_nodes(s) := {"names": sort(object.get(s.nodes, "names", [])), "count": s.nodes.count}

# allowed_of are a started group's nodes whose kubelet reports failCgroupV1: false: on cgroup
# v1, deprecated. The others it names, or does not, run cgroup v2 or were not read.
allowed_of(s) := {"names": names, "count": count(names)} if {
	names := sort([n | some n in object.get(s.nodes, "names", []); n in allowed_nodes])
}

allowed_nodes contains n if {
	some c in components
	c.component == "kubelet"
	c.failCgroupV1 == false
	some n in object.get(c, "nodes", [])
}

cgroup_finding(t, evidence, allowed, flagged) := object.union(
	{
		"key": sprintf("node-runtime/cgroup-v1-%s%s", [evidence, allowed_suffix[allowed]]),
		"category": "node-runtime",
		"severity": cgroup_severity(evidence, allowed),
		"target": t,
		"title": sprintf("%s %s%s", [nodes_phrase(total), cgroup_claim[evidence][total == 1], allowed_phrase(allowed, total == 1)]),
		"detail": concat(" ", [cgroup_evidence_detail[evidence], cgroup_outcome[allowed], sprintf("Seen on: %s.", [systems_text(flagged)]), stat_hint]),
		"remediation": cgroup_remediation[allowed],
		"objects": [{"kind": "Node", "name": n} | some n in array.slice(names, 0, max_objects)],
		"namespaces": [],
		"citations": cgroup_citations(evidence, flagged),
	},
	omitted(total - min([count(names), max_objects])),
) if {
	groups := [nodes[allowed] | some i in flagged; nodes := split_nodes[i]]
	names := sort([n | some g in groups; some n in g.names])
	total := sum([g.count | some g in groups])
}

cgroup_severity(_, true) := "info"

cgroup_severity("os-image-old-kernel", false) := "blocker"

cgroup_severity("kernel", false) := "warning"

cgroup_severity("os-image", false) := "warning"

allowed_suffix := {false: "", true: "-allowed"}

allowed_phrase(false, _) := sprintf(": the kubelet refuses cgroup v1 from %s", [cgroup.refused.version])

allowed_phrase(true, false) := ", and their kubelets allow it with failCgroupV1: false"

allowed_phrase(true, true) := ", and its kubelet allows it with failCgroupV1: false"

# The claim of a title, by evidence and by whether it is about one node.
cgroup_claim := {
	"os-image-old-kernel": {
		false: sprintf("run OS releases that boot cgroup v1 by default, on a Linux kernel older than %s", [cgroup.kernel.minimum]),
		true: sprintf("runs an OS release that boots cgroup v1 by default, on a Linux kernel older than %s", [cgroup.kernel.minimum]),
	},
	"kernel": {
		false: sprintf("run a Linux kernel older than %s, the oldest Kubernetes supports cgroup v2 on", [cgroup.kernel.minimum]),
		true: sprintf("runs a Linux kernel older than %s, the oldest Kubernetes supports cgroup v2 on", [cgroup.kernel.minimum]),
	},
	"os-image": {
		false: "run OS releases that boot cgroup v1 by default",
		true: "runs an OS release that boots cgroup v1 by default",
	},
}

cgroup_evidence_detail := {
	"os-image-old-kernel": sprintf(
		concat(" ", [
			"These OS releases boot cgroup v1 by default, and Kubernetes supports cgroup v2 only on Linux %s or later:",
			"these nodes run cgroup v1 unless someone switched them to cgroup v2 on a kernel Kubernetes does not support",
			"(on the kernel command line, which node status does not show).",
		]),
		[cgroup.kernel.minimum],
	),
	"kernel": sprintf(
		concat(" ", [
			"Kubernetes supports cgroup v2 only on Linux %s or later, but the kubelet checks the cgroup mode a node booted,",
			"not its kernel, and some releases boot cgroup v2 on an older one (RHEL 8's 4.18 can): these nodes may run",
			"either, and their OS release is not one known to boot cgroup v1 by default.",
		]),
		[cgroup.kernel.minimum],
	),
	"os-image": concat(" ", [
		"These OS releases boot cgroup v1 by default (a node can be switched to cgroup v2 on the kernel command line,",
		"which node status does not show).",
	]),
}

cgroup_outcome := {
	false: sprintf(
		concat(" ", [
			"From %s the kubelet refuses to start on a cgroup v1 node unless its configuration sets failCgroupV1: false:",
			"upgraded in place, such a node runs no pods, and kubeadm's preflight check fails on it.",
		]),
		[cgroup.refused.version],
	),
	true: sprintf(
		concat(" ", [
			"Their kubelet configuration sets failCgroupV1: false, so the kubelet still starts on cgroup v1, which is",
			"deprecated from %s and whose support Kubernetes will remove.",
		]),
		[cgroup.refused.version],
	),
}

cgroup_remediation := {
	false: concat(" ", [
		"Move these nodes to cgroup v2 before upgrading their kubelets: a newer OS image (it needs Linux 5.8",
		"or later), or systemd.unified_cgroup_hierarchy=1 on the kernel command line. Only to buy time, set",
		"failCgroupV1: false in the kubelet configuration (kubeadm: the kube-system/kubelet-config ConfigMap).",
	]),
	true: concat(" ", [
		"cgroup v1 is deprecated and its support will be removed: move these nodes to cgroup v2 (a newer OS",
		"image, or systemd.unified_cgroup_hierarchy=1) and drop failCgroupV1: false.",
	]),
}

cgroup_citations("kernel", _) := with_citations(cgroup.refused.citations, cgroup.kernel.citations)

# An OS image finding cites what says the images it names boot cgroup v1.
cgroup_citations("os-image", flagged) := with_citations(cgroup.refused.citations, image_citations(flagged))

cgroup_citations("os-image-old-kernel", flagged) := with_citations(
	with_citations(cgroup.refused.citations, cgroup.kernel.citations),
	image_citations(flagged),
)

image_citations(flagged) := sort({c |
	some i in flagged
	some image in cgroup.osImages
	os_release(image, systems[i].osImage)
	some c in image.citations
})

# with_citations adds the citations of more not yet in cites, in order.
with_citations(cites, more) := array.concat(cites, [c | some c in more; not c in cites])

# systems_text names each flagged group's OS image and kernel, at most max_listed of them.
systems_text(flagged) := listed(sort({sprintf("%s, Linux %s", [systems[i].osImage, systems[i].kernelVersion]) | some i in flagged}))

ipvs_judgement(c, t) := ["blocker", sprintf("KEP-5495 plans its removal at %s", [ipvs.removed.version]), ipvs.removed.citations] if {
	versions.ordinal(t) >= versions.ordinal(ipvs.removed.version)
} else := ["blocker", status, ipvs.gateOff.citations] if {
	versions.ordinal(t) >= versions.ordinal(ipvs.gateOff.version)
	not gate_enabled(c)
	status := sprintf("KEP-5495 plans it off at %s without the %s feature gate", [ipvs.gateOff.version, ipvs.gate])
} else := ["warning", status, ipvs.deprecated.citations] if {
	versions.ordinal(t) >= versions.ordinal(ipvs.deprecated.version)
	status := sprintf("deprecated since %s", [ipvs.deprecated.version])
}

gate_enabled(c) if {
	some g in object.get(c, "featureGates", [])
	g.name == ipvs.gate
	g.value == true
}

object_name(o) := sprintf("%s/%s", [o.namespace, o.name]) if o.namespace

else := o.name

nodes_phrase(1) := "1 node"

nodes_phrase(n) := sprintf("%d nodes", [n]) if n != 1

omitted(n) := {"objectsOmitted": n} if n > 0

else := {}

# A finding names at most max_objects nodes, and text at most max_listed groups.
max_objects := 100

max_listed := 20

listed(items) := concat("; ", items) if {
	count(items) <= max_listed
} else := sprintf("%s and %d more", [concat("; ", array.slice(items, 0, max_listed)), count(items) - max_listed])
