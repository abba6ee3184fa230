# METADATA
# title: CRD conversion webhooks
# description: |
#   CustomResourceDefinitions whose versions convert through a webhook
#   (input.inventory.preflight.conversions) whose service backs nothing. Live only: files
#   mode holds no endpoints.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
# custom:
#   category: crd-conversion
package upgradescope.rules.conversions

import data.upgradescope.lib.preflight

versioning := "https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/"

converting := object.get(object.get(input.inventory, "preflight", {}), "conversions", [])

# METADATA
# title: CRD conversion webhooks whose service backs nothing
# description: |
#   The API server calls a CRD's conversion webhook whenever an object is read, watched or
#   written at a version other than the one it is stored at. While the webhook's service
#   backs nothing those requests fail: clients of the other versions, the controllers that
#   list and watch them after the upgrade restarts them (the garbage collector could block
#   on such a resource), and a storage version migration to a new version.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
#   - ref: https://kubernetes.io/docs/tasks/manage-kubernetes-objects/storage-version-migration/
#   - ref: https://github.com/kubernetes/kubernetes/issues/101078
# custom:
#   families:
#     - id: crd-conversion-webhook-unavailable
#       title: CRD conversion webhooks whose service backs nothing
#       category: crd-conversion
#       reads: [preflight.conversions]
#       capabilities: [crds, service-endpoints]
#       modes: [cluster]
#       severity: >-
#         blocker when a CRD converts through a webhook service that was not found or has 0
#         ready endpoints; a webhook called by URL, and files mode (no endpoints), have no
#         finding
#       citations:
#         - https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
#         - https://kubernetes.io/docs/tasks/manage-kubernetes-objects/storage-version-migration/
#         - https://github.com/kubernetes/kubernetes/issues/101078
findings contains f if {
	some c in converting
	preflight.down(c.service)
	some t in input.targets
	f := finding(c, t)
}

finding(c, t) := {
	"key": sprintf("crd-conversion/webhook-unavailable/%s", [c.crd.name]),
	"category": "crd-conversion",
	"severity": "blocker",
	"target": t,
	"title": sprintf("CustomResourceDefinition %s (%s %s) converts through service %s, which %s", [
		c.crd.name, c.group, c.kind, preflight.service_name(c.service), preflight.why_down(c.service),
	]),
	"detail": concat(" ", [
		sprintf("The API server calls this webhook whenever a %s is read, watched or written at a version other than", [c.kind]),
		"the one it is stored at, so those requests fail now. After the upgrade restarts the controllers, those that list",
		"and watch the resource cannot sync it (the garbage collector could block on it), and a storage version migration",
		"cannot rewrite the objects.",
	]),
	"remediation": concat(" ", [
		"Restore the conversion webhook's service (its pods, endpoints and certificate) before the upgrade, or, if every",
		"version has the same schema, set spec.conversion.strategy to None.",
	]),
	"objects": [object.union({"kind": "CustomResourceDefinition"}, c.crd), preflight.service_ref(c.service)],
	"namespaces": [c.service.namespace],
	"citations": [
		sprintf("%s#webhook-conversion", [versioning]),
		"https://kubernetes.io/docs/tasks/manage-kubernetes-objects/storage-version-migration/",
		"https://github.com/kubernetes/kubernetes/issues/101078",
	],
}
