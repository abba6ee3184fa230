# METADATA
# title: Deprecated API calls
# description: |
#   Something still calls a deprecated API: a row of the apiserver metric
#   apiserver_requested_deprecated_apis (which says that, not who), or callers the API
#   server's audit events name (inventory.auditCalls: user agent, user, verb, counts, last
#   seen). One finding per called API and target, the metric's row and the audit log's callers
#   merged; a call at an API the inventory already has objects for is folded into that
#   finding (its calls and callers fields). The removal comes from the knowledge base when it
#   knows the API, else from the removed_release the API server gave.
# related_resources:
#   - ref: https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings
#   - ref: https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated
# custom:
#   category: deprecated-api-in-use
package upgradescope.rules.calls

import data.upgradescope.kb
import data.upgradescope.lib.apis
import data.upgradescope.lib.calls
import data.upgradescope.lib.versions

# METADATA
# description: One finding per called API and target, unless folded.
# custom:
#   families:
#     - id: deprecated-api-calls
#       title: Clients still calling deprecated APIs
#       category: deprecated-api-in-use
#       reads: [inventory.deprecatedCalls, inventory.auditCalls]
#       capabilities: [deprecated-calls, audit-log]
#       modes: [cluster, files]
#       severity: >-
#         blocker when the called API is removed at or before the target; warning when it is removed in
#         the minor after the target; info otherwise, or when no removal is announced, or when the audit
#         log saw no call since the start of its window (--audit-since) and the metric has no row. The
#         finding lists the audit log's callers, busiest first. A call at an API whose objects the
#         inventory lists is folded into that object's finding.
#       citations:
#         - https://kubernetes.io/docs/reference/using-api/deprecation-policy/
#         - https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings
#         - https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated
findings contains f if {
	some a in judged
	some t in input.targets
	f := object.union(a.finding, {
		"target": t,
		"severity": severity(a, t),
		"remediation": remediation(a.row, a.summary, t),
	})
}

# What each called API's finding says whatever the target, computed once per API.
judged[id] := {"row": r, "removal": removal, "stale": stale, "summary": s, "finding": object.union(f, s.evidence)} if {
	some id in called
	r := api_row(id)
	not folded(r)
	s := object.get(calls.summary, id, no_callers)
	removal := removal_of(id, r)
	stale := stale_calls(id, s)
	f := {
		"key": sprintf("deprecated-api-in-use/%s", [id]),
		"category": "deprecated-api-in-use",
		"title": title(r, stale, removal),
		"detail": detail(id, s),
		"objects": [],
		"namespaces": [],
		"citations": citations(s),
	}
}

# What lib/calls says of an API the audit log did not see called (the metric's row alone).
no_callers := {"order": [], "omitted": set(), "inWindow": false, "evidence": {}, "sentence": ""}

# The audit log's callers that stopped before its window make the finding info, unless the
# metric (which counts since the apiserver started) has a row of its own.
stale_calls(id, s) := false if {
	id in metric
} else := s.inWindow == false

# METADATA
# description: The called APIs (as calls.api names them) the metric or the audit log saw.
called := (metric | object.keys(calls.callers)) | object.keys(calls.omitted)

# The group, version, resource and subresource of an API, read back from its name: an API
# group and a resource hold no "/", and no group is named core.
api_row(id) := {"group": group_of(parts[0]), "version": parts[1], "resource": parts[2], "subresource": concat("/", array.slice(parts, 3, 4))} if {
	parts := split(id, "/")
}

group_of("core") := ""

group_of(group) := group if group != "core"

# The APIs the metric has a row for. Read whole (id in metric, object.get(announced, …)), never
# by key: a lookup of a partial rule by key evaluates its body again over every row.
metric contains calls.api(c) if some c in object.get(input.inventory, "deprecatedCalls", [])

# The removals the API server announced for each API (the metric's removed_release label, the
# audit annotation k8s.io/removed-release), the earliest first should two disagree.
announced[id] := sort_releases(rs) if some id, rs in announcements

announcements[id] contains c.removedRelease if {
	some c in object.get(input.inventory, "deprecatedCalls", [])
	object.get(c, "removedRelease", "") != ""
	id := calls.api(c)
}

announcements[id] contains c.removedRelease if {
	some id, cs in calls.callers
	some c in cs
	object.get(c, "removedRelease", "") != ""
}

announcements[id] contains o.removedRelease if {
	some id, os in calls.omitted
	some o in os
	object.get(o, "removedRelease", "") != ""
}

# The knowledge-base entries the inventory has objects at: their finding carries the calls.
used_entries contains apis.key(u.group, u.version, u.kind) if some u in object.get(input.inventory, "apiUsage", [])

folded(r) if apis.by_resource[calls.resource_key(r)] in used_entries

removal_of(id, r) := kb.apis[apis.by_resource[calls.resource_key(r)]].removed if {
	kb.apis[apis.by_resource[calls.resource_key(r)]].removed
} else := object.get(announced, [id, 0], "")

sort_releases(rs) := [x[1] | some x in sort([[versions.ordinal(v), v] | some v in rs])]

severity(a, t) := "info" if a.stale

else := severity_of(a.removal, t)

severity_of(removal, t) := "blocker" if {
	versions.ordinal(removal) <= versions.ordinal(t)
} else := "warning" if {
	versions.ordinal(removal) == versions.ordinal(t) + 1
} else := "info"

label(r) := sprintf("%s %s/%s", [api_version(r), r.resource, r.subresource]) if r.subresource != ""

else := sprintf("%s %s", [api_version(r), r.resource])

api_version(r) := r.version if r.group == ""

else := sprintf("%s/%s", [r.group, r.version])

title(r, true, removal) := sprintf("No request called %s since %s, %s", [label(r), calls.audit.since, removal_phrase(removal)])

title(r, false, removal) := sprintf("Requests still call %s, %s", [label(r), removal_phrase(removal)]) if {
	removal != ""
} else := sprintf("Requests still call %s (removal not announced)", [label(r)])

removal_phrase("") := "removal not announced"

removal_phrase(removal) := sprintf("removed in %s", [removal]) if removal != ""

metric_detail := "The apiserver counted requests to this deprecated API since it started; the metric does not say who made them."

detail(id, s) := metric_detail if {
	s.sentence == ""
} else := concat(" ", ["The apiserver counted requests to this deprecated API since it started.", s.sentence]) if {
	id in metric
} else := s.sentence

remediation(r, s, t) := "Find the client (audit log userAgent, or the warning header clients log) and move it to the replacement API." if {
	count(s.order) == 0
} else := sprintf("Move %s to %s, which Kubernetes %s serves.", [calls.who_is(c), replacement(r, t), t]) if {
	[c] := s.order
	count(s.omitted) == 0
	replacement(r, t)
} else := sprintf("Move %s off %s: no replacement that Kubernetes %s serves is known.", [calls.who_is(c), label(r), t]) if {
	[c] := s.order
	count(s.omitted) == 0
} else := sprintf("Move the callers to %s, which Kubernetes %s serves, starting with %s, the busiest.", [
	replacement(r, t), t, calls.who_is(s.order[0]),
]) if {
	replacement(r, t)
} else := sprintf("Move the callers off %s, starting with %s, the busiest: no replacement that Kubernetes %s serves is known.", [
	label(r), calls.who_is(s.order[0]), t,
])

# The replacement the knowledge base knows for the called API at the target, at the same
# subresource.
replacement(r, t) := label(object.union(r, {"group": s.group, "version": s.version, "resource": s.resource})) if {
	s := kb.apis[apis.successor(apis.by_resource[calls.resource_key(r)], t)]
}

citations(s) := ["https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings", kb.meta.citation] if {
	s.sentence == ""
} else := [
	"https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings",
	"https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated",
	kb.meta.citation,
]
