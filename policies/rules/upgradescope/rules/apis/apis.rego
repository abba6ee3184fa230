# METADATA
# title: Removed and deprecated APIs
# description: |
#   Judges every group/version/kind the inventory recorded against the API lifecycle data:
#   removed at or before the target is a blocker, removed in the minor after the target a
#   warning, deprecated otherwise info; a version the target does not serve yet is a blocker.
#   Kinds that are only ever requested, never stored (TokenReview), are judged the same way
#   when manifests write them.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-policy/
# custom:
#   category: removed-api, deprecated-api
package upgradescope.rules.apis

import data.upgradescope.kb
import data.upgradescope.lib.apis
import data.upgradescope.lib.calls
import data.upgradescope.lib.versions

# METADATA
# description: One finding per recorded API and target.
# scope: document

# METADATA
# custom:
#   families:
#     - id: removed-api-objects
#       title: Objects at API versions the target does not serve
#       category: removed-api
#       reads: [inventory.apiUsage]
#       capabilities: [api-usage]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the target no longer serves the version (removed at or before it) or does not serve
#         it yet (introduced after it); warning when the version is removed in the minor after the target.
#       citations:
#         - https://kubernetes.io/docs/reference/using-api/deprecation-guide/
#         - https://kubernetes.io/docs/reference/using-api/deprecation-policy/
findings contains finding(u, k, t, "removed-api", "blocker", title, remediation) if {
	some u in input.inventory.apiUsage
	some t in input.targets
	[k, e] := entry(u)
	apis.removed_by(e, t)
	title := sprintf("%s %s removed in %s (%s)", [apis.api_version(e), e.kind, e.removed, objects_phrase(u.count)])
	remediation := migrate(k, e, t)
}

# METADATA
# custom:
#   families: [{id: removed-api-objects}]
findings contains finding(u, k, t, "removed-api", "warning", title, remediation) if {
	some u in input.inventory.apiUsage
	some t in input.targets
	[k, e] := entry(u)
	versions.ordinal(e.removed) == versions.ordinal(t) + 1
	title := sprintf("%s %s removed in %s, the minor after %s (%s)", [
		apis.api_version(e), e.kind, e.removed, t, objects_phrase(u.count),
	])
	remediation := migrate(k, e, e.removed)
}

# METADATA
# custom:
#   families:
#     - id: deprecated-api-objects
#       title: Objects at deprecated API versions
#       category: deprecated-api
#       reads: [inventory.apiUsage, inventory.apiAuthorshipUnknown]
#       capabilities: [api-usage]
#       modes: [files, cluster]
#       severity: >-
#         info when the version is deprecated (at or before the target, or announced for a later minor)
#         and not removed within a minor of the target; objects whose writer cannot be told (no
#         managedFields, no last-applied-configuration) are info too.
#       citations:
#         - https://kubernetes.io/docs/reference/using-api/deprecation-policy/
#         - https://kubernetes.io/docs/reference/using-api/deprecation-guide/
findings contains finding(u, k, t, "deprecated-api", "info", title, remediation) if {
	some u in input.inventory.apiUsage
	some t in input.targets
	[k, e] := entry(u)
	e.deprecated
	not removal_in_window(e, t)
	not apis.not_yet_served(e, t)
	title := sprintf("%s %s %s%s (%s)", [
		apis.api_version(e), e.kind, deprecation_phrase(e, t), removal_phrase(e), objects_phrase(u.count),
	])
	remediation := migrate(k, e, t)
}

# METADATA
# custom:
#   families: [{id: removed-api-objects}]
findings contains unserved if {
	some u in input.inventory.apiUsage
	some t in input.targets
	[k, e] := entry(u)
	apis.not_yet_served(e, t)
	title := sprintf("%s %s not served until %s (%s)", [
		apis.api_version(e), e.kind, e.introduced, objects_phrase(u.count),
	])
	f := finding(u, k, t, "removed-api", "blocker", title, keep_serving(k, e, t))
	unserved := object.union(f, {"key": sprintf("removed-api/%s/unserved", [k])})
}

# METADATA
# custom:
#   families: [{id: deprecated-api-objects}]
findings contains unattributed if {
	some u in input.inventory.apiAuthorshipUnknown
	some t in input.targets
	[k, e] := entry(u)
	title := sprintf("%s %s: %s whose writer cannot be told (%s)", [
		apis.api_version(e), e.kind, objects_phrase(u.count), removal_status(e, t),
	])
	f := finding(u, k, t, "deprecated-api", "info", title, migrate(k, e, t))
	unattributed := object.union(f, {
		"key": sprintf("deprecated-api/%s/authorship-unknown", [k]),
		"detail": with_callers(
			"These objects have no managedFields and no last-applied-configuration: nothing in them shows whether a client still writes them through this version.",
			k,
		),
	})
}

removal_status(e, t) := sprintf("removed in %s", [e.removed]) if apis.removed_by(e, t)

else := sprintf("deprecated since %s", [e.deprecated])

# Request-only kinds (TokenReview, SubjectAccessReview: stored false) are judged like stored
# ones: a manifest that creates one at an API the target does not serve is refused. Only
# manifests record them; a live cluster keeps no such objects to list, and its deprecated-API
# calls are the calls pack's.
entry(u) := [k, e] if {
	k := apis.key(u.group, u.version, u.kind)
	e := kb.apis[k]
}

removal_in_window(e, t) if versions.ordinal(e.removed) <= versions.ordinal(t) + 1

finding(u, k, t, category, severity, title, remediation) := object.union(
	{
		"key": sprintf("%s/%s", [category, k]),
		"category": category,
		"severity": severity,
		"target": t,
		"title": title,
		"detail": with_callers(detail(u), k),
		"remediation": remediation,
		"objects": object.get(u, "objects", []),
		"objectsOmitted": object.get(u, "objectsOmitted", 0),
		"namespaces": sort(object.keys(u.namespaces) - {""}),
		"citations": kb.apis[k].citations,
		"calls": calls_of(k),
	},
	callers_of(k),
)

# The audit log's callers at this API (its subresources included), folded into the object
# finding as the calls pack would list them; {} when the audit log names none.
callers_of(k) := object.get(calls.entry_summary, [k, "evidence"], {})

# The detail, and the sentence naming the audit log's callers when it names any.
with_callers(text, k) := callers_sentence(k) if {
	text == ""
} else := sprintf("%s %s", [text, callers_sentence(k)]) if {
	endswith(text, ".")
} else := sprintf("%s. %s", [text, callers_sentence(k)]) if {
	callers_sentence(k)
} else := text

callers_sentence(k) := s if {
	s := object.get(calls.entry_summary, [k, "sentence"], "")
	s != ""
}

# Calls the apiserver saw at this API, folded into the object finding.
calls_of(k) := sort([call_label(c) |
	some c in object.get(input.inventory, "deprecatedCalls", [])
	apis.by_resource[sprintf("%s/%s/%s", [apis.group_name(c.group), c.version, c.resource])] == k
])

call_label(c) := sprintf("%s/%s", [c.resource, c.subresource]) if {
	object.get(c, "subresource", "") != ""
} else := c.resource

objects_phrase(1) := "1 object"

objects_phrase(n) := sprintf("%d objects", [n]) if n != 1

# The title already counts the objects at the API; the detail adds where they are. Objects
# with no namespace (cluster-scoped kinds) add nothing to say.
detail(u) := sprintf("by namespace: %s", [concat(", ", per_namespace(u))]) if {
	count(object.keys(u.namespaces) - {""}) > 0
} else := ""

# The detail names ten namespaces; the finding's namespaces field has them all.
per_namespace(u) := array.concat(
	[sprintf("%s (%d)", [namespace_label(ns), u.namespaces[ns]]) | some ns in array.slice(sorted, 0, 10)],
	more_namespaces(count(sorted) - 10),
) if {
	sorted := sort(object.keys(u.namespaces))
}

more_namespaces(n) := [sprintf("%d more", [n])] if n > 0

else := []

namespace_label("") := "no namespace"

namespace_label(ns) := ns if ns != ""

deprecation_phrase(e, t) := sprintf("deprecated since %s", [e.deprecated]) if apis.deprecated_by(e, t)

deprecation_phrase(e, t) := sprintf("deprecated from %s (future deprecation)", [e.deprecated]) if {
	not apis.deprecated_by(e, t)
}

removal_phrase(e) := "" if not e.removed

removal_phrase(e) := sprintf(", removal in %s (projected)", [e.removed]) if {
	versions.ordinal(e.removed) > versions.ordinal(kb.meta.horizon)
}

removal_phrase(e) := sprintf(", removal in %s", [e.removed]) if {
	versions.ordinal(e.removed) <= versions.ordinal(kb.meta.horizon)
}

migrate(k, _, t) := sprintf("Migrate manifests and clients to %s %s, which Kubernetes %s serves.", [
	apis.api_version(s), s.kind, t,
]) if {
	s := kb.apis[apis.successor(k, t)]
}

migrate(k, e, t) := sprintf(
	"No replacement for %s %s that Kubernetes %s serves is known; remove or replace these objects before upgrading.",
	[apis.api_version(e), e.kind, t],
) if {
	not apis.successor(k, t)
}

keep_serving(k, e, t) := sprintf(
	"Kubernetes %s does not serve %s %s; keep %s until the cluster runs %s or later.",
	[t, apis.api_version(e), e.kind, concat(" or ", siblings), e.introduced],
) if {
	siblings := apis.served_siblings(k, t)
	count(siblings) > 0
}

keep_serving(k, e, t) := sprintf(
	"Kubernetes %s serves no version of %s; upgrade to %s or later before applying these objects.",
	[t, e.kind, e.introduced],
) if {
	count(apis.served_siblings(k, t)) == 0
}
