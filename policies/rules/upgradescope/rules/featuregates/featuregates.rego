# METADATA
# title: Feature gates the target refuses
# description: |
#   Judges the feature gates control-plane components, kube-proxy and kubelets are started
#   with (input.inventory.preflight.components[].featureGates) against the feature gate table
#   generated from the Kubernetes source (kb.featuregates, tools/genfeatures). A component
#   given a gate its binary no longer declares, or a locked gate at the other value, exits at
#   start: two failure modes, two families. A gate no minor of the table declares (a typo, a
#   distribution's own gate, one removed before the table's first minor) is not judged: the
#   component refuses it today already, or it is not Kubernetes's to judge. Targets outside
#   the table's minors are not judged either (kb-stale speaks past the horizon).
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/
#   - ref: https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/
# custom:
#   category: feature-gates
package upgradescope.rules.featuregates

import data.upgradescope.kb
import data.upgradescope.lib.versions

citation_docs := "https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/"

citation_removed := "https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/"

# component-base's featuregate refuses a gate it does not know, and a locked gate set to the
# other value (v1.37.0; the same checks since the first minor of the table).
citation_unknown := "https://github.com/kubernetes/kubernetes/blob/v1.37.0/staging/src/k8s.io/component-base/featuregate/feature_gate.go#L418-L423"

citation_locked := "https://github.com/kubernetes/kubernetes/blob/v1.37.0/staging/src/k8s.io/component-base/featuregate/feature_gate.go#L424-L428"

# METADATA
# title: Feature gates removed at the target
# description: |
#   A component started with a feature gate its binary no longer declares exits with
#   "unrecognized feature gate": kube-apiserver, the controller manager and the scheduler
#   crash-loop as static pods, a kubelet does not come back on its node. One finding per
#   component and gate, naming where the gate is set.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/
# custom:
#   families:
#     - id: feature-gates-removed
#       title: Feature gates removed at the target
#       category: feature-gates
#       reads: [preflight.components]
#       capabilities: [component-flags, kubelet-config]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target no longer declares the gate (removed at or before it);
#         warning when the minor after the target removes it, or when it is Deprecated at
#         the target; gates no minor of the table declares are not judged. At most a warning
#         when every setting is a kubelet's read from configz (source kubelet-configz) on a
#         managed provider (inventory.provider eks, gke or aks): the provider writes the
#         kubelet configuration of the nodes it creates in the upgrade, so today's gate
#         reaches the new kubelet only if the node pool's own configuration sets it
#       citations:
#         - https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/
#         - https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/
#         - https://github.com/kubernetes/kubernetes/blob/v1.37.0/staging/src/k8s.io/component-base/featuregate/feature_gate.go#L418-L423
findings contains f if {
	some [component, name] in set_gates
	gate := kb.featuregates.gates[name]
	some t in input.targets
	judged(t)
	j := removal(gate, t)
	uses := [u | some u in uses_of(component, name); not refused_by_lock(gate, t, u.value)]
	count(uses) > 0
	f := removed_finding(component, name, gate, t, j, uses)
}

# METADATA
# title: Locked feature gates set to the other value
# description: |
#   A gate locked to its default (GA or Deprecated, LockToDefault) refuses the other value:
#   the component exits with "cannot set feature gate X to Y, feature is locked to Z". One
#   finding per component and gate, naming where the other value is set.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/
# custom:
#   families:
#     - id: feature-gates-locked
#       title: Locked feature gates set to the other value
#       category: feature-gates
#       reads: [preflight.components]
#       capabilities: [component-flags, kubelet-config]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the gate is locked to its default at the target and a component sets
#         the other value; at most a warning when every setting is a kubelet's read from
#         configz (source kubelet-configz) on a managed provider (inventory.provider eks, gke
#         or aks), which writes the kubelet configuration of the nodes it replaces
#       citations:
#         - https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/
#         - https://github.com/kubernetes/kubernetes/blob/v1.37.0/staging/src/k8s.io/component-base/featuregate/feature_gate.go#L424-L428
findings contains f if {
	some [component, name] in set_gates
	gate := kb.featuregates.gates[name]
	some t in input.targets
	judged(t)
	s := state_at(gate, t)
	s.lockToDefault
	uses := [u | some u in uses_of(component, name); u.value != s.default]
	count(uses) > 0
	f := locked_finding(component, name, t, s, uses)
}

components := object.get(object.get(input.inventory, "preflight", {}), "components", [])

# set_gates are the component kinds and gate names any component entry sets.
set_gates contains [c.component, g.name] if {
	some c in components
	some g in object.get(c, "featureGates", [])
}

# uses_of are the entries of a component kind that set a gate: the value, the object with the
# gate's line when the collector recorded one (files mode), and the nodes the entry runs on.
uses_of(component, name) := [u |
	some c in components
	c.component == component
	some g in object.get(c, "featureGates", [])
	g.name == name
	u := {
		"value": g.value,
		"object": at_line(ref(c.object), object.get(g, "line", 0)),
		"nodes": object.get(c, "nodes", []),
		"nodesOmitted": object.get(c, "nodesOmitted", 0),
		"replaced": provider_replaces(c),
	}
]

# METADATA
# description: |
#   A kubelet's configuration read from configz on a managed node pool: when the upgrade
#   replaces the node, the provider writes the new kubelet's configuration from the node
#   pool's, so what today's kubelet runs with does not carry over by itself.
provider_replaces(c) if {
	c.source == "kubelet-configz"
	object.get(input.inventory, "provider", "") in managed_providers
} else := false

managed_providers := {"eks", "gke", "aks"}

# replaced is whether every setting of a finding is one the provider's node replacement
# rewrites: then the finding is at most a warning.
replaced(uses) if {
	count(uses) > 0
	every u in uses {
		u.replaced
	}
}

capped(severity, uses) := "warning" if {
	severity == "blocker"
	replaced(uses)
} else := severity

replaced_note(uses) := sprintf(
	concat(" ", [
		" These settings are what the kubelets of %s managed nodes run with today (configz). When the upgrade",
		"replaces the nodes, %s writes the new kubelets' configuration from the node pool's (its launch template,",
		"bootstrap or node pool settings), so the gate stops them only if that configuration sets it too: check it there.",
	]),
	[upper(input.inventory.provider), upper(input.inventory.provider)],
) if {
	replaced(uses)
} else := ""

ref(o) := object.filter(o, ["kind", "namespace", "name", "file", "line", "renderedFrom", "ignore"])

at_line(o, line) := object.union(o, {"line": line}) if line > 0

else := o

# judged is whether the table describes the target: between its first and newest minor.
judged(t) if {
	n := versions.ordinal(t)
	n >= versions.ordinal(kb.featuregates.minors[0])
	n <= versions.ordinal(kb.featuregates.minors[count(kb.featuregates.minors) - 1])
}

# state_at is the gate's last change at or before minor t: its default, prerelease stage and
# lock there, or {removed: true}. Undefined before the gate's first change.
state_at(gate, t) := cs[count(cs) - 1] if {
	n := versions.ordinal(t)
	cs := [c | some c in gate.changes; versions.ordinal(c.minor) <= n]
	count(cs) > 0
}

# removal is how the removed family judges a gate at target t, at most once: the severity, the
# title's phrase, and by when to remove the setting.
removal(gate, t) := {
	"severity": "blocker",
	"removedIn": s.minor,
	"phrase": sprintf("was removed in %s", [s.minor]),
	"by": sprintf("before upgrading to %s", [t]),
} if {
	s := state_at(gate, t)
	s.removed
} else := {
	"severity": "warning",
	"phrase": sprintf("removed in %s, the minor after %s", [next, t]),
	"by": sprintf("before upgrading to %s", [next]),
} if {
	next := versions.next(t)
	judged(next)
	state_at(gate, next).removed
} else := {
	"severity": "warning",
	"phrase": sprintf("deprecated in %s", [t]),
	"by": "while the component still accepts it: a later minor removes it",
} if {
	state_at(gate, t).preRelease == "Deprecated"
}

refused_by_lock(gate, t, value) if {
	s := state_at(gate, t)
	s.lockToDefault
	value != s.default
}

removed_finding(component, name, gate, t, j, uses) := object.union(
	{
		"key": sprintf("feature-gates/removed/%s/%s", [component, name]),
		"category": "feature-gates",
		"severity": capped(j.severity, uses),
		"target": t,
		"title": removed_title(component, name, t, j, uses),
		"detail": concat("", [removed_detail(component, name, gate, j), replaced_note(uses)]),
		"remediation": sprintf("Remove %s from %s's feature gates (%s) %s.", [name, component, setting(component), j.by]),
		"objects": objects(uses),
		"namespaces": namespaces(uses),
		"citations": [citation_removed, citation_docs, citation_unknown],
	},
	omitted(uses),
)

removed_title(component, name, t, j, uses) := sprintf(
	"%s is started with feature gate %s, removed in %s, on %s nodes the upgrade replaces with the node pool's kubelet configuration (%s)",
	[component, name, j.removedIn, upper(input.inventory.provider), where(uses)],
) if {
	j.severity == "blocker"
	replaced(uses)
} else := sprintf(
	"%s will not start on %s: feature gate %s %s (%s)",
	[component, t, name, j.phrase, where(uses)],
) if {
	j.severity == "blocker"
} else := sprintf("%s is started with feature gate %s, %s (%s)", [component, name, j.phrase, where(uses)])

removed_detail(component, name, gate, j) := sprintf(
	concat(" ", [
		"%s refuses a feature gate its binary no longer declares (\"unrecognized feature gate: %s\") and exits,",
		"so the upgraded component does not come up. %s",
	]),
	[component, name, last_state(gate)],
) if {
	j.severity == "blocker"
} else := sprintf(
	concat(" ", [
		"Kubernetes removes deprecated and graduated feature gates a few minors after the change;",
		"from the minor that removes %s, %s refuses it (\"unrecognized feature gate\") and exits. %s",
	]),
	[name, component, last_state(gate)],
)

# last_state says what the gate was when last declared, so the reader knows whether the
# feature stays on without it.
last_state(gate) := sprintf(
	"Its last declared state (from %s) was %s with default %v%s.",
	[s.minor, s.preRelease, s.default, locked_phrase(s)],
) if {
	declared := [c | some c in gate.changes; not c.removed]
	s := declared[count(declared) - 1]
}

locked_phrase(s) := ", locked" if s.lockToDefault

else := ""

locked_finding(component, name, t, s, uses) := object.union(
	{
		"key": sprintf("feature-gates/locked/%s/%s", [component, name]),
		"category": "feature-gates",
		"severity": capped("blocker", uses),
		"target": t,
		"title": locked_title(component, name, t, s, uses),
		"detail": concat("", [
			sprintf(
				concat(" ", [
					"From %s the gate %s is %s and locked to its default, %v; %s refuses the other value",
					"(\"cannot set feature gate %s to %v, feature is locked to %v\") and exits.",
				]),
				[s.minor, name, s.preRelease, s.default, component, name, other(s.default), s.default],
			),
			replaced_note(uses),
		]),
		"remediation": sprintf(
			"Remove %s=%v from %s's feature gates (%s) before upgrading to %s: the feature is %s there whatever the setting says.",
			[name, other(s.default), component, setting(component), t, on_off(s.default)],
		),
		"objects": objects(uses),
		"namespaces": namespaces(uses),
		"citations": [citation_docs, citation_locked],
	},
	omitted(uses),
)

locked_title(component, name, t, s, uses) := sprintf(
	"%s is started with feature gate %s=%v, locked to %v at %s, on %s nodes the upgrade replaces with the node pool's kubelet configuration (%s)",
	[component, name, other(s.default), s.default, t, upper(input.inventory.provider), where(uses)],
) if {
	replaced(uses)
} else := sprintf(
	"%s will not start on %s: feature gate %s is locked to %v and set to %v (%s)",
	[component, t, name, s.default, other(s.default), where(uses)],
)

other(true) := false

other(false) := true

on_off(true) := "on"

on_off(false) := "off"

setting("kubelet") := "featureGates in its KubeletConfiguration, or --feature-gates"

setting("kube-proxy") := "featureGates in its KubeProxyConfiguration, or --feature-gates"

setting(component) := "--feature-gates" if not component in {"kubelet", "kube-proxy"}

# objects are the entries' objects and the nodes they run on, sorted and once each.
objects(uses) := sort({o |
	some u in uses
	some o in array.concat([u.object], [{"kind": "Node", "name": n} | some n in u.nodes])
})

namespaces(uses) := sort({ns | some u in uses; ns := object.get(u.object, "namespace", ""); ns != ""})

omitted(uses) := {"objectsOmitted": n} if {
	n := sum([u.nodesOmitted | some u in uses])
	n > 0
} else := {}

# where names the objects that set the gate (at most three) and the nodes they run on; a
# kubelet read from a node's configz is named by its nodes alone.
where(uses) := concat("; ", array.concat(set_in(uses), nodes_phrase(uses)))

set_in(uses) := [sprintf("set in %s", [listed(labels)])] if {
	labels := sort({label(u.object) | some u in uses; not one_of_its_nodes(u)})
	count(labels) > 0
} else := []

one_of_its_nodes(u) if {
	u.object.kind == "Node"
	u.object.name in u.nodes
}

nodes_phrase(uses) := [sprintf("on nodes %s", [listed_of(names, count(names) + hidden)])] if {
	names := sort({n | some u in uses; some n in u.nodes})
	hidden := sum([u.nodesOmitted | some u in uses])
	count(names) > 0
} else := []

label(o) := sprintf("%s:%d", [o.file, o.line]) if {
	o.file
	o.line
} else := o.file if {
	o.file
} else := sprintf("%s/%s", [o.namespace, o.name]) if {
	o.namespace
} else := sprintf("%s %s", [lower(o.kind), o.name]) if {
	o.kind
} else := o.name

listed(items) := listed_of(items, count(items))

# listed_of names the first three of items, and how many more of total there are.
listed_of(items, total) := concat(", ", items) if total <= 3

else := sprintf("%s and %d more", [concat(", ", array.slice(items, 0, 3)), total - count(array.slice(items, 0, 3))])
