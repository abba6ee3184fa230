# METADATA
# title: Ingress objects must move to the Gateway API before the upgrade
# description: |
#   A platform team's candidate rule for the dry-run tests: every Ingress written at
#   networking.k8s.io/v1 is a blocker, so a cluster with one turns blocked.
# custom:
#   category: fleet-gateway
package upgradescope.custom.fleet

ingresses := [u | some u in input.inventory.apiUsage; u.group == "networking.k8s.io"; u.kind == "Ingress"]

# METADATA
# description: One blocker per target while any networking.k8s.io Ingress is written.
findings contains f if {
	count(ingresses) > 0
	some t in input.targets
	f := {
		"key": "fleet-gateway/ingress",
		"category": "fleet-gateway",
		"severity": "blocker",
		"target": t,
		"title": "Ingress objects must move to the Gateway API",
		"remediation": "Replace each Ingress with an HTTPRoute.",
		"citations": ["https://gateway-api.sigs.k8s.io/guides/migrating-from-ingress/"],
	}
}
