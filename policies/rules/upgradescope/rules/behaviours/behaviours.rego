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
