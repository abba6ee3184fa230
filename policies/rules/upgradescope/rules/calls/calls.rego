# METADATA
# title: Deprecated API calls
# description: |
#   Rows of the apiserver metric apiserver_requested_deprecated_apis: something still calls a
#   deprecated API. A call at an API the inventory already has objects for is folded into that
#   finding (its calls field); the rest stand alone. The removal comes from the knowledge base
#   when it knows the API, else from the metric's removed_release label.
# related_resources:
#   - ref: https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings
# custom:
#   category: deprecated-api-in-use
package upgradescope.rules.calls

import data.upgradescope.kb
import data.upgradescope.lib.apis
import data.upgradescope.lib.versions

# METADATA
# description: One finding per called resource and target, unless folded.
# custom:
#   families:
#     - id: deprecated-api-calls
#       title: Clients still calling deprecated APIs
#       category: deprecated-api-in-use
#       reads: [inventory.deprecatedCalls]
#       capabilities: [deprecated-calls]
#       modes: [cluster]
#       severity: >-
#         blocker when the called API is removed at or before the target; warning when it is removed in
#         the minor after the target; info otherwise, or when no removal is announced. A call at an API
#         whose objects the inventory lists is folded into that object's finding.
#       citations:
#         - https://kubernetes.io/docs/reference/using-api/deprecation-policy/
#         - https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings
findings contains f if {
	some c in input.inventory.deprecatedCalls
	some t in input.targets
	not folded(c)
	removal := removal_of(c)
	severity := severity_of(removal, t)
	f := {
		"key": concat("/", array.concat(["deprecated-api-in-use", apis.group_name(c.group), c.version, c.resource], subresource(c))),
		"category": "deprecated-api-in-use",
		"severity": severity,
		"target": t,
		"title": title(c, removal),
		"detail": "The apiserver counted requests to this deprecated API since it started; the metric does not say who made them.",
		"remediation": "Find the client (audit log userAgent, or the warning header clients log) and move it to the replacement API.",
		"objects": [],
		"namespaces": [],
		"citations": ["https://kubernetes.io/blog/2020/09/03/warnings/#deprecation-warnings", kb.meta.citation],
	}
}

resource_key(c) := sprintf("%s/%s/%s", [apis.group_name(c.group), c.version, c.resource])

folded(c) if {
	k := apis.by_resource[resource_key(c)]
	some u in input.inventory.apiUsage
	apis.key(u.group, u.version, u.kind) == k
}

removal_of(c) := kb.apis[apis.by_resource[resource_key(c)]].removed if {
	kb.apis[apis.by_resource[resource_key(c)]].removed
} else := object.get(c, "removedRelease", "")

severity_of(removal, t) := "blocker" if {
	versions.ordinal(removal) <= versions.ordinal(t)
} else := "warning" if {
	versions.ordinal(removal) == versions.ordinal(t) + 1
} else := "info"

subresource(c) := [c.subresource] if object.get(c, "subresource", "") != ""

else := []

api_version(c) := c.version if c.group == ""

else := sprintf("%s/%s", [c.group, c.version])

title(c, "") := sprintf("Requests still call %s %s (removal not announced)", [api_version(c), c.resource])

title(c, removal) := sprintf("Requests still call %s %s, removed in %s", [api_version(c), c.resource, removal]) if removal != ""
