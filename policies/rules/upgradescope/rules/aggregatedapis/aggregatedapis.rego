# METADATA
# title: Aggregated APIs
# description: |
#   APIServices backed by a service (input.inventory.preflight.apiServices) whose Available
#   condition is not True. Live only: files mode holds no APIService status.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/apiserver-aggregation/
# custom:
#   category: aggregated-api
package upgradescope.rules.aggregatedapis

import data.upgradescope.lib.preflight

api_services := object.get(object.get(input.inventory, "preflight", {}), "apiServices", [])

# METADATA
# title: Aggregated APIs that are not Available
# description: |
#   The aggregation layer proxies an APIService's group and version to its service. While
#   it is not Available, discovery of that group fails, so every client that needs the full
#   list of APIs fails or works on a partial one: the namespace controller cannot finish
#   deleting any namespace (NamespaceDeletionDiscoveryFailure), and controllers that list
#   every resource, the garbage collector among them, can stall. An upgrade restarts all of
#   them.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/apiserver-aggregation/
#   - ref: https://github.com/kubernetes/kubernetes/issues/60807
#   - ref: https://github.com/kubernetes/kubernetes/issues/111354
# custom:
#   families:
#     - id: aggregated-api-unavailable
#       title: Aggregated APIs that are not Available
#       category: aggregated-api
#       reads: [preflight.apiServices]
#       capabilities: [api-services]
#       modes: [cluster]
#       severity: >-
#         blocker when an APIService backed by a service has an Available condition whose
#         status is not True (False or Unknown); an APIService without the condition has no
#         finding
#       citations:
#         - https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/apiserver-aggregation/
#         - https://github.com/kubernetes/kubernetes/issues/60807
#         - https://github.com/kubernetes/kubernetes/issues/111354
findings contains f if {
	some a in api_services
	a.available != "True"
	some t in input.targets
	f := finding(a, t)
}

finding(a, t) := {
	"key": sprintf("aggregated-api/unavailable/%s", [a.object.name]),
	"category": "aggregated-api",
	"severity": "blocker",
	"target": t,
	"title": sprintf("APIService %s (%s/%s) is not Available%s: service %s", [
		a.object.name, a.group, a.version, reason(a), preflight.service_name(a.service),
	]),
	"detail": concat("", [
		sprintf("Discovery of %s/%s fails while its service does not answer, so clients that need every API fail or ", [a.group, a.version]),
		"work on a partial list: the namespace controller cannot finish deleting any namespace ",
		"(NamespaceDeletionDiscoveryFailure), and controllers that list every resource, the garbage collector among them, ",
		"can stall when the upgrade restarts them.",
		message(a),
	]),
	"remediation": concat(" ", [
		"Fix what backs the APIService (its pods, the service's endpoints, its certificate) before the upgrade,",
		"or delete the APIService if nothing serves that API any more.",
	]),
	"objects": [object.union({"kind": "APIService"}, a.object), preflight.service_ref(a.service)],
	"namespaces": [a.service.namespace],
	"citations": [
		"https://kubernetes.io/docs/concepts/extend-kubernetes/api-extension/apiserver-aggregation/",
		"https://github.com/kubernetes/kubernetes/issues/60807",
		"https://github.com/kubernetes/kubernetes/issues/111354",
	],
}

reason(a) := sprintf(" (%s)", [a.reason]) if a.reason

else := ""

message(a) := sprintf(" The condition says: %s", [a.message]) if a.message

else := ""
