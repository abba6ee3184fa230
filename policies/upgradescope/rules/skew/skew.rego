# METADATA
# title: Version skew
# description: |
#   Judges kubelets, kube-proxy, controller-manager and scheduler against the Kubernetes
#   version skew policy (numbers in data.upgradescope.kb.skew): before the upgrade, against
#   the oldest kube-apiserver; after it, against the target. Vendor builds are parsed by
#   their minor. No server version, no skew findings.
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
findings contains f if {
	current # without a server version there is nothing to judge skew against
	some t in input.targets
	window := kubelet_window(versions.ordinal(t))
	oldest_kubelet < versions.ordinal(t) - window
	late := nodes_below(kubelets_by_minor, versions.ordinal(t) - window)
	count(late) > 0
	title := sprintf("%d kubelet(s) would be more than %d minors behind Kubernetes %s", [count(late), window, t])
	remediation := "Upgrade these nodes (or replace their node pools) before or while upgrading the control plane, one minor at a time."
	f := finding("kubelet-post-upgrade", "blocker", t, title, nodes_detail(late), remediation)
}

findings contains f if {
	window := kubelet_window(current)
	late := sort([name | some name, v in kubelets; v < current - window])
	count(late) > 0
	some t in input.targets
	title := sprintf("%d kubelet(s) are more than %d minors behind the control plane (%s) already", [count(late), window, versions.minor(current)])
	f := finding("kubelet-current", "warning", t, title, nodes_detail(late), "Upgrade these nodes first.")
}

findings contains f if {
	ahead := sort([name | some name, v in kubelets; v > current])
	count(ahead) > 0
	some t in input.targets
	title := sprintf("%d kubelet(s) are newer than the oldest kube-apiserver (%s)", [count(ahead), versions.minor(current)])
	remediation := "A kubelet must not be newer than kube-apiserver; upgrade the control plane first."
	f := finding("kubelet-newer-than-apiserver", "warning", t, title, nodes_detail(ahead), remediation)
}

findings contains f if {
	bad := sort([n.name | some n in input.inventory.nodes; not versions.ordinal(n.kubeletVersion)])
	count(bad) > 0
	some t in input.targets
	title := sprintf("%d kubelet version(s) could not be parsed", [count(bad)])
	f := finding("kubelet-unparseable", "info", t, title, nodes_detail(bad), "Check these nodes' kubelet versions by hand.")
}

findings contains f if {
	newest_apiserver - current > kb.skew.apiserverMaxSpread
	some t in input.targets
	title := sprintf("kube-apiserver instances span %s to %s", [versions.minor(current), versions.minor(newest_apiserver)])
	f := finding("apiserver-ha-spread", "warning", t, title, "", "Finish the control-plane upgrade so every kube-apiserver runs one minor.")
}

findings contains f if {
	some component in control_plane
	v := max(component_versions(component))
	v > current
	some t in input.targets
	title := sprintf("%s %s is newer than the oldest kube-apiserver %s", [component, versions.minor(v), versions.minor(current)])
	remediation := sprintf("%s must not be newer than kube-apiserver; upgrade every apiserver first.", [component])
	f := finding(sprintf("%s-newer", [component]), "blocker", t, title, "", remediation)
}

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

findings contains f if {
	ahead := sort([node | some node, v in proxies; v > current])
	count(ahead) > 0
	some t in input.targets
	title := sprintf("kube-proxy on %d node(s) is newer than the oldest kube-apiserver", [count(ahead)])
	f := finding("kube-proxy-newer", "warning", t, title, nodes_detail(ahead), "kube-proxy must not be newer than kube-apiserver.")
}

findings contains f if {
	late := sort([node | some node, v in proxies; newest_apiserver - v > kb.skew.kubeProxyMaxBehind])
	count(late) > 0
	some t in input.targets
	title := sprintf("kube-proxy on %d node(s) is more than %d minors behind kube-apiserver", [count(late), kb.skew.kubeProxyMaxBehind])
	f := finding("kube-proxy-behind", "warning", t, title, nodes_detail(late), "Upgrade kube-proxy with its nodes.")
}

findings contains f if {
	current
	some t in input.targets
	versions.ordinal(t) - oldest_proxy > kb.skew.kubeProxyMaxBehind
	late := nodes_below(proxies_by_minor, versions.ordinal(t) - kb.skew.kubeProxyMaxBehind)
	count(late) > 0
	title := sprintf("kube-proxy on %d node(s) would be more than %d minors behind Kubernetes %s", [
		count(late), kb.skew.kubeProxyMaxBehind, t,
	])
	f := finding("kube-proxy-post-upgrade", "blocker", t, title, nodes_detail(late), "Upgrade kube-proxy before the control plane passes its window.")
}

findings contains f if {
	# Judge each distinct (kube-proxy, kubelet) pair once, then name its nodes.
	some [proxy, kubelet] in {[p, kubelets[n]] | some n, p in proxies}
	outside_kubelet_window(proxy, kubelet)
	some node, p in proxies
	p == proxy
	kubelets[node] == kubelet
	some t in input.targets
	title := sprintf("kube-proxy %s on %s is outside the skew window of its kubelet %s", [versions.minor(proxy), node, versions.minor(kubelet)])
	remediation := "kube-proxy must not be newer than its node's kubelet, nor more than the kubelet window older."
	f := finding(sprintf("kube-proxy-kubelet/%s", [node]), "warning", t, title, "", remediation)
}

findings contains f if {
	some t in input.targets
	versions.ordinal(t) - current > 1
	title := sprintf("Kubernetes %s is %d minors ahead of %s: the control plane upgrades one minor at a time", [
		t, versions.ordinal(t) - current, versions.minor(current),
	])
	f := finding("upgrade-path", "info", t, title, "", "Plan one hop per minor (upgradescope scan --plan).")
}

apiservers contains versions.ordinal(c.version) if {
	some c in input.inventory.controlPlane
	c.component == "kube-apiserver"
}

# The cluster's current minor: its oldest kube-apiserver, else the server version.
current := min(apiservers) if count(apiservers) > 0

else := versions.ordinal(input.inventory.serverVersion)

newest_apiserver := max(apiservers) if count(apiservers) > 0

else := current

kubelet_window(ordinal) := kb.skew.kubeletMaxBehind if {
	ordinal >= versions.ordinal(kb.skew.kubeletWindowChangedIn)
} else := kb.skew.kubeletMaxBehindBefore125

# Complete rules: computed once per query, however many rules read them.
kubelets := {n.name: v | some n in input.inventory.nodes; v := ordinals[n.kubeletVersion]} # regal ignore:prefer-set-or-object-rule

# Thousands of nodes share a few version strings: parse each string once.
ordinals := {s: versions.ordinal(s) | some s in version_strings} # regal ignore:prefer-set-or-object-rule

version_strings contains n.kubeletVersion if some n in input.inventory.nodes

version_strings contains c.version if some c in input.inventory.controlPlane

oldest_kubelet := min({v | some v in kubelets})

# Nodes grouped by minor, once: per-target rules then merge a few groups, not every node.
kubelets_by_minor := {v: [n | some n, x in kubelets; x == v] | some v in {x | some x in kubelets}} # regal ignore:prefer-set-or-object-rule

proxies_by_minor := {v: [n | some n, x in proxies; x == v] | some v in {x | some x in proxies}} # regal ignore:prefer-set-or-object-rule

# The sorted nodes of every group below a minor.
nodes_below(groups, minimum) := sort([n | some v, ns in groups; v < minimum; some n in ns])

oldest_proxy := min({v | some v in proxies})

control_plane := {"kube-controller-manager", "kube-scheduler"}

component_versions(component) := {versions.ordinal(c.version) |
	some c in input.inventory.controlPlane
	c.component == component
}

proxies := {c.node: ordinals[c.version] | some c in input.inventory.controlPlane; c.component == "kube-proxy"} # regal ignore:prefer-set-or-object-rule

outside_kubelet_window(proxy, kubelet) if proxy > kubelet

outside_kubelet_window(proxy, kubelet) if kubelet - proxy > kubelet_window(kubelet)

nodes_detail(nodes) := sprintf("Nodes: %s", [concat(", ", array.slice(nodes, 0, 100))]) if {
	count(nodes) <= 100
} else := sprintf("Nodes: %s and %d more", [concat(", ", array.slice(nodes, 0, 100)), count(nodes) - 100])

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
