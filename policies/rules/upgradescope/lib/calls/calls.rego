# METADATA
# title: Callers of deprecated APIs
# description: |
#   Reads the audit log's section of the inventory (inventory.auditCalls): its callers and
#   omitted rows grouped by the API they call and by the knowledge-base entry that API serves,
#   ordered busiest first, and what a finding says of them (the callers it lists, those it
#   counts, the sentence naming the busiest). The deprecated-calls finding and the object
#   finding it folds into both read them here.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated
package upgradescope.lib.calls

import data.upgradescope.lib.apis

# METADATA
# description: The audit log's section, or {} when the inventory has none.
audit := object.get(input.inventory, "auditCalls", {})

# METADATA
# description: How many callers a finding lists; the rest it counts in callersOmitted.
max_listed := 10

# METADATA
# description: How many callers a finding's detail names.
max_named := 3

# METADATA
# description: The API a call row is at, as the finding key ends ("<group or core>/<version>/<resource>[/<subresource>]").
api(c) := concat("/", array.concat([apis.group_name(c.group), c.version, c.resource], subresource(c)))

subresource(c) := [c.subresource] if object.get(c, "subresource", "") != ""

else := []

# METADATA
# description: The key apis.by_resource looks a call row's resource up by (the subresource left out).
resource_key(c) := sprintf("%s/%s/%s", [apis.group_name(c.group), c.version, c.resource])

# METADATA
# description: The audit log's callers by the API they call.
callers[id] contains c if {
	some c in object.get(audit, "callers", [])
	id := api(c)
}

# METADATA
# description: The audit log's omitted rows (callers it counted, not listed) by API.
omitted[id] contains o if {
	some o in object.get(audit, "omitted", [])
	id := api(o)
}

# METADATA
# description: The audit log's callers by the knowledge-base entry of the resource they call (subresources included).
entry_callers[k] contains c if {
	some c in object.get(audit, "callers", [])
	k := apis.by_resource[resource_key(c)]
}

# METADATA
# description: The audit log's omitted rows by the knowledge-base entry of their resource.
entry_omitted[k] contains o if {
	some o in object.get(audit, "omitted", [])
	k := apis.by_resource[resource_key(o)]
}

# METADATA
# description: |
#   What the audit log says of each API it saw called (by api): its callers busiest first
#   (order), the omitted rows (omitted), whether a call was seen in the window (inWindow),
#   what a finding carries (evidence) and the sentence naming the callers (sentence). Computed
#   once per API, whatever the number of targets.
summary[id] := about(object.get(callers, id, set()), object.get(omitted, id, set())) if {
	some id in (object.keys(callers) | object.keys(omitted))
}

# METADATA
# description: The same as summary, for each knowledge-base entry (its subresources included).
entry_summary[k] := about(object.get(entry_callers, k, set()), object.get(entry_omitted, k, set())) if {
	some k in (object.keys(entry_callers) | object.keys(entry_omitted))
}

about(cs, os) := {
	"order": order,
	"omitted": os,
	"inWindow": in_window(order, os),
	"evidence": evidence(order, os),
	"sentence": sentence(order, os),
} if {
	order := ranked(cs)
}

in_window(order, os) if seen_in_window(order, os)

else := false

# METADATA
# description: |
#   Callers busiest first: by count, then the latest seen, then user agent, user, verb and
#   subresource, so the order never depends on the inventory's.
ranked(cs) := [x[6] | some x in sort([[0 - c.count, descending(c.lastSeen), c.userAgent, c.user, c.verb, object.get(c, "subresource", ""), c] |
	some c in cs
])]

# Audit times are one fixed-width format (inventory.AuditTime), so swapping each digit d for
# 9-d turns the latest into the least; parsing would drop a caller whose time does not parse.
descending(t) := strings.replace_n(inverse_digits, t)

inverse_digits := {"0": "9", "1": "8", "2": "7", "3": "6", "4": "5", "5": "4", "6": "3", "7": "2", "8": "1", "9": "0"}

# METADATA
# description: True when a caller or an omitted row was seen at or after the audit window's start.
# scope: document
seen_in_window(order, _) if {
	some c in order
	c.lastSeen >= audit.since
}

seen_in_window(_, os) if {
	some o in os
	o.lastSeen >= audit.since
}

# What a finding carries about the callers (in order) and omitted rows os of one API or entry:
# the busiest max_listed callers and, when there are more, how many callers and calls it
# leaves out (callers past the list and the omitted rows), exactly as the inventory counts them.
evidence(order, os) := object.union(listed, omitted_field(rest, os)) if {
	listed := {"callers": [caller(c) | some c in array.slice(order, 0, max_listed)] | count(order) > 0}
	rest := array.slice(order, max_listed, count(order))
}

omitted_field(rest, os) := {"callersOmitted": {"callers": n, "calls": m}} if {
	n := count(rest) + sum([o.callers | some o in os])
	m := sum([c.count | some c in rest]) + sum([o.calls | some o in os])
	n + m > 0
} else := {}

caller(c) := object.union(
	{k: c[k] | some k in ["userAgent", "user", "verb", "count", "firstSeen", "lastSeen"]},
	{k: c[k] | some k in ["serviceAccount", "subresource", "sourceRanges", "sourceRangesOmitted"]; c[k]},
)

# The sentence naming the busiest max_named callers (user agent, service account or user,
# verb, count, last seen) and counting the others with os; when none of them was seen in the
# window it says so first.
sentence(order, os) := concat("", [stale_lead, last_callers(order, os), named(order), more(order, os), "."]) if {
	not seen_in_window(order, os)
	count(order) > 0
} else := concat("", ["The audit log names who calls it: ", named(order), more(order, os), "."]) if {
	count(order) > 0
} else := sprintf("The audit log counted %s (%s) without listing them, the last at %s.", [
	caller_count(sum([o.callers | some o in os])), call_count(sum([o.calls | some o in os])), last_seen(os),
]) if {
	seen_in_window(order, os)
} else := sprintf("%sthe audit log counted %s (%s) without listing them, the last at %s.", [
	stale_lead, caller_count(sum([o.callers | some o in os])), call_count(sum([o.calls | some o in os])), last_seen(os),
])

last_callers(order, os) := "the last caller was " if {
	count(order) == 1
	count(os) == 0
} else := "the last callers were: "

stale_lead := sprintf("No call was seen since %s, the start of the audit window; ", [audit.since])

last_seen(os) := max([o.lastSeen | some o in os])

named(order) := concat("; ", [label(c) | some c in array.slice(order, 0, max_named)])

# The callers past those named: the listed ones, then the omitted rows' counts. Callers the
# reading could not track are in an omitted row's calls but not its callers, so a count of
# calls alone is said as calls.
more(order, os) := sprintf("; and %s (%s)", [more_callers(n), call_count(m)]) if {
	[n, m] := beyond(order, os)
	n > 0
} else := sprintf("; and %s", [more_calls(m)]) if {
	[_, m] := beyond(order, os)
	m > 0
} else := ""

more_callers(1) := "1 more caller"

more_callers(n) := sprintf("%d more callers", [n]) if n != 1

more_calls(1) := "1 more call"

more_calls(m) := sprintf("%d more calls", [m]) if m != 1

beyond(order, os) := [count(rest) + sum([o.callers | some o in os]), sum([c.count | some c in rest]) + sum([o.calls | some o in os])] if {
	rest := array.slice(order, max_named, count(order))
}

# METADATA
# description: A caller as prose names it, its user agent first.
label(c) := sprintf("%s (%s) %s, %s, last seen %s", [agent(c), who(c), verb(c), call_count(c.count), c.lastSeen])

# METADATA
# description: Who a caller is, for a remediation to name (its user agent and its service account or user).
who_is(c) := sprintf("%s (%s)", [agent(c), who(c)])

agent(c) := c.userAgent if c.userAgent != ""

else := "no user agent"

who(c) := sprintf("service account %s", [c.serviceAccount]) if {
	object.get(c, "serviceAccount", "") != ""
} else := sprintf("user %s", [c.user]) if {
	c.user != ""
} else := "no user"

verb(c) := sprintf("%s %s", [c.verb, c.subresource]) if object.get(c, "subresource", "") != ""

else := c.verb

call_count(1) := "1 call"

call_count(n) := sprintf("%d calls", [n]) if n != 1

caller_count(1) := "1 caller"

caller_count(n) := sprintf("%d callers", [n]) if n != 1
