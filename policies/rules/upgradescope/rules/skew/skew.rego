# METADATA
# title: Version skew
# description: |
#   Judges kubelets, kube-proxy, controller-manager and scheduler against the Kubernetes
#   version skew policy (numbers in data.upgradescope.kb.skew): before the upgrade, nothing
#   may be newer than the oldest kube-apiserver nor further behind than the window below the
#   newest one; after it, against the target. Nodes come grouped by version,
#   so the rules iterate versions, not nodes. Vendor builds are parsed by their minor. No
#   server version, no skew findings. kubectl versions come from the user agents in the API
#   server's audit events (inventory.auditCalls) and are judged against the target.
# related_resources:
#   - ref: https://kubernetes.io/releases/version-skew-policy/
# custom:
#   category: version-skew
package upgradescope.rules.skew

import data.upgradescope.kb
import data.upgradescope.lib.versions

# METADATA
# description: Skew findings per target.
# scope: document

# METADATA
# custom:
#   families:
#     - id: kubelet-skew
#       title: Kubelets outside the version skew policy
#       category: version-skew
#       reads: [inventory.nodes, inventory.controlPlane, inventory.serverVersion]
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker when kubelets would be more than the kubelet window (3 minors; 2 before 1.25) behind the
#         target; warning when they are already that far behind the newest kube-apiserver, or newer than
#         the oldest one.
#       citations:
#         - https://kubernetes.io/releases/version-skew-policy/
findings contains f if {
	current # without a server version there is nothing to judge skew against
	some t in input.targets
	window := kubelet_window(versions.ordinal(t))
	late := [g | some g in kubelet_groups; g.minor < versions.ordinal(t) - window]
	count(late) > 0
	title := sprintf("%d kubelet(s) would be more than %d minors behind Kubernetes %s", [total(late), window, t])
	remediation := "Upgrade these nodes (or replace their node pools) before or while upgrading the control plane, one minor at a time."
	f := finding("kubelet-post-upgrade", "blocker", t, title, nodes_detail(late), remediation)
}

# Behind is measured from the newest kube-apiserver: in an HA cluster at 1.32 and 1.31 a 1.28
# kubelet is out of policy although it is three behind the older instance.
# METADATA
# custom:
#   families: [{id: kubelet-skew}]
findings contains f if {
	window := kubelet_window(newest_apiserver)
	late := [g | some g in kubelet_groups; g.minor < newest_apiserver - window]
	count(late) > 0
	some t in input.targets
	title := sprintf("%d kubelet(s) are more than %d minors behind the control plane (%s) already", [
		total(late), window, versions.minor(newest_apiserver),
	])
	f := finding("kubelet-current", "warning", t, title, nodes_detail(late), "Upgrade these nodes first.")
}

# METADATA
# custom:
#   families: [{id: kubelet-skew}]
findings contains f if {
	ahead := [g | some g in kubelet_groups; g.minor > current]
	count(ahead) > 0
	some t in input.targets
	title := sprintf("%d kubelet(s) are newer than the oldest kube-apiserver (%s)", [total(ahead), versions.minor(current)])
	remediation := "A kubelet must not be newer than kube-apiserver; upgrade the control plane first."
	f := finding("kubelet-newer-than-apiserver", "warning", t, title, nodes_detail(ahead), remediation)
}

# METADATA
# custom:
#   notice:
#     category: version-skew
#     why: >-
#       A kubelet version that does not parse cannot be judged for skew; the info asks for a check by
#       hand.
findings contains f if {
	bad := [{"count": g.count, "names": g.names, "namesOmitted": object.get(g, "namesOmitted", 0)} |
		some g in input.inventory.nodes
		not versions.ordinal(g.kubeletVersion)
	]
	count(bad) > 0
	some t in input.targets
	title := sprintf("%d kubelet version(s) could not be parsed", [total(bad)])
	f := finding("kubelet-unparseable", "info", t, title, nodes_detail(bad), "Check these nodes' kubelet versions by hand.")
}

# METADATA
# custom:
#   families:
#     - id: control-plane-skew
#       title: Control-plane components outside the version skew policy
#       category: version-skew
#       reads: [inventory.controlPlane, inventory.serverVersion, inventory.emulatedVersion]
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker when kube-controller-manager or kube-scheduler is newer than the oldest kube-apiserver;
#         warning when one is more than a minor behind the newest, or when kube-apiserver instances span
#         more than one minor; info when the target is more than one minor ahead (the control plane
#         upgrades one minor at a time).
#       citations:
#         - https://kubernetes.io/releases/version-skew-policy/
#         - https://kubernetes.io/releases/version-skew-policy/#supported-component-upgrade-order
findings contains f if {
	newest_apiserver - current > kb.skew.apiserverMaxSpread
	some t in input.targets
	title := sprintf("kube-apiserver instances span %s to %s", [versions.minor(current), versions.minor(newest_apiserver)])
	f := finding("apiserver-ha-spread", "warning", t, title, "", "Finish the control-plane upgrade so every kube-apiserver runs one minor.")
}

# METADATA
# custom:
#   families: [{id: control-plane-skew}]
findings contains f if {
	some component in control_plane
	v := max(component_versions(component))
	v > current
	some t in input.targets
	title := sprintf("%s %s is newer than the oldest kube-apiserver %s", [component, versions.minor(v), versions.minor(current)])
	remediation := sprintf("%s must not be newer than kube-apiserver; upgrade every apiserver first.", [component])
	f := finding(sprintf("%s-newer", [component]), "blocker", t, title, "", remediation)
}

# METADATA
# custom:
#   families: [{id: control-plane-skew}]
findings contains f if {
	some component in control_plane
	v := min(component_versions(component))
	newest_apiserver - v > kb.skew.controlPlaneMaxBehind
	some t in input.targets
	title := sprintf("%s %s is more than %d minor behind kube-apiserver %s", [
		component, versions.minor(v), kb.skew.controlPlaneMaxBehind, versions.minor(newest_apiserver),
	])
	remediation := sprintf("Upgrade %s to within one minor of kube-apiserver.", [component])
	f := finding(sprintf("%s-behind", [component]), "warning", t, title, "", remediation)
}

# METADATA
# custom:
#   families:
#     - id: kube-proxy-skew
#       title: kube-proxy outside the version skew policy
#       category: version-skew
#       reads: [inventory.controlPlane, inventory.serverVersion]
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker when kube-proxy would be more than 3 minors behind the target; warning when it is newer
#         than the oldest kube-apiserver, already more than 3 minors behind the newest, or outside the
#         window of the kubelet beside it.
#       citations:
#         - https://kubernetes.io/releases/version-skew-policy/
findings contains f if {
	ahead := [g | some g in proxy_groups; g.minor > current]
	count(ahead) > 0
	some t in input.targets
	title := sprintf("kube-proxy on %d node(s) is newer than the oldest kube-apiserver", [total(ahead)])
	f := finding("kube-proxy-newer", "warning", t, title, nodes_detail(ahead), "kube-proxy must not be newer than kube-apiserver.")
}

# METADATA
# custom:
#   families: [{id: kube-proxy-skew}]
findings contains f if {
	late := [g | some g in proxy_groups; newest_apiserver - g.minor > kb.skew.kubeProxyMaxBehind]
	count(late) > 0
	some t in input.targets
	title := sprintf("kube-proxy on %d node(s) is more than %d minors behind kube-apiserver", [total(late), kb.skew.kubeProxyMaxBehind])
	f := finding("kube-proxy-behind", "warning", t, title, nodes_detail(late), "Upgrade kube-proxy with its nodes.")
}

# METADATA
# custom:
#   families: [{id: kube-proxy-skew}]
findings contains f if {
	current
	some t in input.targets
	late := [g | some g in proxy_groups; versions.ordinal(t) - g.minor > kb.skew.kubeProxyMaxBehind]
	count(late) > 0
	title := sprintf("kube-proxy on %d node(s) would be more than %d minors behind Kubernetes %s", [
		total(late), kb.skew.kubeProxyMaxBehind, t,
	])
	f := finding("kube-proxy-post-upgrade", "blocker", t, title, nodes_detail(late), "Upgrade kube-proxy before the control plane passes its window.")
}

# METADATA
# custom:
#   families: [{id: kube-proxy-skew}]
findings contains f if {
	some g in proxy_groups
	kubelet := versions.ordinal(g.kubeletVersion)
	outside_kubelet_window(g.minor, kubelet)
	some t in input.targets
	title := sprintf("kube-proxy %s on %d node(s) is outside the skew window of their kubelet %s", [
		versions.minor(g.minor), g.count, versions.minor(kubelet),
	])
	remediation := "kube-proxy must not be newer than its node's kubelet, nor more than the kubelet window older."
	discriminator := sprintf("kube-proxy-kubelet/%s/%s", [versions.minor(g.minor), versions.minor(kubelet)])
	f := finding(discriminator, "warning", t, title, nodes_detail([g]), remediation)
}

# METADATA
# custom:
#   families: [{id: control-plane-skew}]
findings contains f if {
	some t in input.targets
	versions.ordinal(t) - current > 1
	title := sprintf("Kubernetes %s is %d minors ahead of %s: the control plane upgrades one minor at a time", [
		t, versions.ordinal(t) - current, versions.minor(current),
	])
	f := finding("upgrade-path", "info", t, title, "", "Plan one hop per minor (upgradescope scan --plan).")
}

# kubectl is judged against the target only: the control plane runs it after the upgrade, and
# a kubectl the audit log last saw before its window is no longer in use as far as it tells,
# so it is not judged at all (an info per stale version would list every laptop ever upgraded).
# METADATA
# custom:
#   families:
#     - id: kubectl-skew
#       title: kubectl versions outside the version skew policy
#       category: version-skew
#       reads: [inventory.auditCalls]
#       capabilities: [audit-log]
#       modes: [cluster, files]
#       severity: >-
#         warning when a kubectl minor the audit log saw since the start of its window (--audit-since) is
#         more than one minor older or newer than the target; kubectl last seen before the window is not
#         judged.
#       citations:
#         - https://kubernetes.io/releases/version-skew-policy/#kubectl
findings contains f if {
	some minor, clients in kubectl_minors
	some t in input.targets
	off := minor - versions.ordinal(t)
	abs(off) > kb.skew.kubectlMaxSkew
	title := sprintf("kubectl %s is %s Kubernetes %s (kubectl is supported within %s of kube-apiserver)", [
		versions.minor(minor), distance(off), t, minors(kb.skew.kubectlMaxSkew),
	])
	remediation := sprintf("Move these users to kubectl %s to %s before the control plane runs %s.", [
		versions.minor(versions.ordinal(t) - kb.skew.kubectlMaxSkew), versions.minor(versions.ordinal(t) + kb.skew.kubectlMaxSkew), t,
	])
	f := object.union(
		finding(sprintf("kubectl/%s", [versions.minor(minor)]), "warning", t, title, kubectl_detail(clients), remediation),
		{"citations": kb.skew.kubectlCitations},
	)
}

# The kubectl versions the audit log saw in its window, by minor.
kubectl_minors[minor] contains k if {
	audit := object.get(input.inventory, "auditCalls", {})
	some k in object.get(audit, "kubectl", [])
	k.lastSeen >= audit.since
	minor := versions.ordinal(k.version)

	# a kubectl built from source without version stamps says v0.0.0: its minor is unknown
	floor(minor / 1000) == 1
}

distance(off) := sprintf("%s behind", [minors(0 - off)]) if off < 0

distance(off) := sprintf("%s ahead of", [minors(off)]) if off > 0

minors(1) := "1 minor"

minors(n) := sprintf("%d minors", [n]) if n != 1

# Each version with its requests, last seen and users, exactly as the audit log counted them.
kubectl_detail(clients) := sprintf("The audit log saw %s.", [concat("; ", [kubectl_label(k) | some k in sorted_clients(clients)])])

sorted_clients(clients) := [x[1] | some x in sort([[k.version, k] | some k in clients])]

kubectl_label(k) := sprintf("%s (%s, last seen %s) used by %s", [k.version, requests_phrase(k.count), k.lastSeen, users_phrase(k)])

requests_phrase(1) := "1 request"

requests_phrase(n) := sprintf("%d requests", [n]) if n != 1

users_phrase(k) := concat("", [concat(", ", object.get(k, "users", [])), more_users(object.get(k, "usersOmitted", 0))]) if {
	count(object.get(k, "users", [])) > 0
} else := "users the audit log did not name"

more_users(0) := ""

more_users(n) := sprintf(" and %d more", [n]) if n > 0

apiservers contains versions.ordinal(c.version) if {
	some c in input.inventory.controlPlane
	c.component == "kube-apiserver"
}

# The cluster's current minor: the emulated minor, else its oldest kube-apiserver, else the
# server version.
current := versions.cluster if {
	input.inventory.emulatedVersion # an emulating apiserver behaves as its emulated minor
} else := min(apiservers) if {
	count(apiservers) > 0
} else := versions.cluster

newest_apiserver := max(apiservers) if count(apiservers) > 0

else := current

kubelet_window(ordinal) := kb.skew.kubeletMaxBehind if {
	ordinal >= versions.ordinal(kb.skew.kubeletWindowChangedIn)
} else := kb.skew.kubeletMaxBehindBefore125

# Node groups with their parsed minor.
kubelet_groups := [object.union(g, {"minor": v}) | some g in input.inventory.nodes; v := versions.ordinal(g.kubeletVersion)]

proxy_groups := [object.union(g, {"minor": v, "names": object.get(g, "nodes", []), "namesOmitted": object.get(g, "nodesOmitted", 0)}) |
	some g in input.inventory.controlPlane
	g.component == "kube-proxy"
	v := versions.ordinal(g.version)
]

control_plane := {"kube-controller-manager", "kube-scheduler"}

component_versions(component) := {versions.ordinal(c.version) |
	some c in input.inventory.controlPlane
	c.component == component
}

outside_kubelet_window(proxy, kubelet) if proxy > kubelet

outside_kubelet_window(proxy, kubelet) if kubelet - proxy > kubelet_window(kubelet)

total(groups) := sum([object.get(g, "count", 1) | some g in groups])

# Names the groups' nodes, at most 100 of them, and counts the rest.
nodes_detail(groups) := sprintf("Nodes: %s", [concat(", ", names)]) if {
	names := array.slice(sort([n | some g in groups; some n in g.names]), 0, 100)
	total(groups) <= count(names)
} else := sprintf("Nodes: %s and %d more", [concat(", ", names), total(groups) - count(names)]) if {
	names := array.slice(sort([n | some g in groups; some n in g.names]), 0, 100)
}

finding(discriminator, severity, t, title, detail, remediation) := {
	"key": sprintf("version-skew/%s", [discriminator]),
	"category": "version-skew",
	"severity": severity,
	"target": t,
	"title": title,
	"detail": detail,
	"remediation": remediation,
	"objects": [],
	"namespaces": [],
	"citations": kb.skew.citations,
}
