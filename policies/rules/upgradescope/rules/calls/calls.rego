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
	some id, rs in called
	not folded(id)
	r := sort(rs)[0] # one row, should an API be spelled twice
	some t in input.targets
	f := finding(id, r, t)
}

# METADATA
# description: |
#   The called APIs, each with its group, version, resource and subresource (one row, however
#   many sources name it): the metric's rows, the audit log's callers and omitted rows.
# scope: document
called[id] contains api_row(c) if {
	some c in object.get(input.inventory, "deprecatedCalls", [])
	id := calls.api(c)
}

called[id] contains api_row(c) if {
	some id, cs in calls.callers
	some c in cs
}

called[id] contains api_row(o) if {
	some id, os in calls.omitted
	some o in os
}

api_row(c) := {"group": c.group, "version": c.version, "resource": c.resource, "subresource": object.get(c, "subresource", "")}

# The metric's rows by API.
metric[id] contains c if {
	some c in object.get(input.inventory, "deprecatedCalls", [])
	id := calls.api(c)
}

# The removals the API server announced for each API (the metric's removed_release label, the
# audit annotation k8s.io/removed-release).
announced[id] contains c.removedRelease if {
	some id, cs in metric
	some c in cs
	object.get(c, "removedRelease", "") != ""
}

announced[id] contains c.removedRelease if {
	some id, cs in calls.callers
	some c in cs
	object.get(c, "removedRelease", "") != ""
}

announced[id] contains o.removedRelease if {
	some id, os in calls.omitted
	some o in os
	object.get(o, "removedRelease", "") != ""
}

# The knowledge-base entries the inventory has objects at: their finding carries the calls.
used_entries contains apis.key(u.group, u.version, u.kind) if some u in object.get(input.inventory, "apiUsage", [])

folded(id) if {
	some r in called[id]
	apis.by_resource[calls.resource_key(r)] in used_entries
}

finding(id, r, t) := object.union(base, calls.evidence(cs, os)) if {
	cs := object.get(calls.callers, id, set())
	os := object.get(calls.omitted, id, set())
	removal := removal_of(id, r)
	base := {
		"key": sprintf("deprecated-api-in-use/%s", [id]),
		"category": "deprecated-api-in-use",
		"severity": severity(id, cs, os, removal, t),
		"target": t,
		"title": title(id, r, cs, os, removal),
		"detail": detail(id, cs, os),
		"remediation": remediation(r, cs, os, t),
		"objects": [],
		"namespaces": [],
		"citations": citations(cs, os),
	}
}

removal_of(id, r) := kb.apis[apis.by_resource[calls.resource_key(r)]].removed if {
	kb.apis[apis.by_resource[calls.resource_key(r)]].removed
} else := sort_releases(announced[id])[0] if {
	announced[id]
} else := ""

# The earliest announced removal, should two sources disagree.
sort_releases(rs) := [x[1] | some x in sort([[versions.ordinal(v), v] | some v in rs])]

# The audit log's callers that stopped before its window make the finding info, unless the
# metric (which counts since the apiserver started) has a row of its own.
severity(id, cs, os, removal, t) := "info" if {
	not metric[id]
	not calls.seen_in_window(cs, os)
} else := severity_of(removal, t)

severity_of(removal, t) := "blocker" if {
	versions.ordinal(removal) <= versions.ordinal(t)
} else := "warning" if {
	versions.ordinal(removal) == versions.ordinal(t) + 1
} else := "info"

label(r) := sprintf("%s %s/%s", [api_version(r), r.resource, r.subresource]) if r.subresource != ""

else := sprintf("%s %s", [api_version(r), r.resource])

api_version(r) := r.version if r.group == ""

else := sprintf("%s/%s", [r.group, r.version])

title(id, r, cs, os, removal) := sprintf("No request called %s since %s, %s", [label(r), calls.audit.since, removal_phrase(removal)]) if {
	not metric[id]
	not calls.seen_in_window(cs, os)
} else := sprintf("Requests still call %s, %s", [label(r), removal_phrase(removal)]) if {
	removal != ""
} else := sprintf("Requests still call %s (removal not announced)", [label(r)])

removal_phrase("") := "removal not announced"

removal_phrase(removal) := sprintf("removed in %s", [removal]) if removal != ""

metric_detail := "The apiserver counted requests to this deprecated API since it started; the metric does not say who made them."

detail(id, cs, os) := metric_detail if {
	count(cs) + count(os) == 0
} else := concat(" ", ["The apiserver counted requests to this deprecated API since it started.", calls.sentence(cs, os)]) if {
	metric[id]
} else := calls.sentence(cs, os)

remediation(r, cs, os, t) := "Find the client (audit log userAgent, or the warning header clients log) and move it to the replacement API." if {
	count(cs) == 0
} else := sprintf("Move %s to %s, which Kubernetes %s serves.", [calls.who_is(c), replacement(r, t), t]) if {
	[c] := calls.ranked(cs)
	count(os) == 0
	replacement(r, t)
} else := sprintf("Move %s off %s: no replacement that Kubernetes %s serves is known.", [calls.who_is(c), label(r), t]) if {
	[c] := calls.ranked(cs)
	count(os) == 0
} else := sprintf("Move the callers to %s, which Kubernetes %s serves, starting with %s, the busiest.", [
	replacement(r, t), t, calls.who_is(calls.ranked(cs)[0]),
]) if {
	replacement(r, t)
} else := sprintf("Move the callers off %s, starting with %s, the busiest: no replacement that Kubernetes %s serves is known.", [
	label(r), calls.who_is(calls.ranked(cs)[0]), t,
])

# The replacement the knowledge base knows for the called API at the target, at the same
# subresource.
replacement(r, t) := label(object.union(r, {"group": s.group, "version": s.version, "resource": s.resource})) if {
	s := kb.apis[apis.successor(apis.by_resource[calls.resource_key(r)], t)]
}

citations(cs, os) := [
	"https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings",
	"https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated",
	kb.meta.citation,
] if {
	count(cs) + count(os) > 0
} else := ["https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings", kb.meta.citation]
