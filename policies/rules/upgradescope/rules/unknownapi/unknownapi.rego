# METADATA
# title: Unknown built-in APIs
# description: |
#   An object at a version of a built-in group that the knowledge base does not describe
#   (apps/v1beta9): a typo, or an API newer than the knowledge base. Custom resource groups
#   stay silent; their CRDs judge them.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/#api-groups
# custom:
#   category: unknown-api
package upgradescope.rules.unknownapi

import data.upgradescope.kb
import data.upgradescope.lib.apis

# METADATA
# description: Info per unknown built-in API and target.
# custom:
#   notice:
#     category: unknown-api
#     why: >-
#       A version of a built-in group the knowledge base does not describe is a typo or an API newer
#       than the knowledge base: the info says what could not be judged.
findings contains f if {
	some u in input.inventory.apiUsage
	kb.groups[u.group]
	k := apis.key(u.group, u.version, u.kind)
	not kb.apis[k]
	some t in input.targets
	f := {
		"key": sprintf("unknown-api/%s", [k]),
		"category": "unknown-api",
		"severity": "info",
		"target": t,
		"title": sprintf("%s %s is not an API Kubernetes serves as far as the knowledge base knows (%d object%s)", [
			apis.api_version(u), u.kind, u.count, plural(u.count),
		]),
		"detail": sprintf("The knowledge base covers Kubernetes up to %s.", [kb.meta.horizon]),
		"remediation": "Check the apiVersion for a typo; applying it would fail on a server that does not serve it.",
		"objects": object.get(u, "objects", []),
		"objectsOmitted": object.get(u, "objectsOmitted", 0),
		"namespaces": sort(object.keys(u.namespaces) - {""}),
		"citations": ["https://kubernetes.io/docs/reference/using-api/#api-groups"],
	}
}

plural(1) := ""

plural(n) := "s" if n != 1
