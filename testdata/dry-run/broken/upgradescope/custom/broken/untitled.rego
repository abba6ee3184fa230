# METADATA
# title: A candidate that breaks the findings contract on clusters with Endpoints
# description: Its finding has no title, so the engine refuses it and names the pack.
package upgradescope.custom.broken

# METADATA
# description: An untitled finding wherever Endpoints are written.
findings contains f if {
	some u in input.inventory.apiUsage
	u.kind == "Endpoints"
	some t in input.targets
	f := {"key": "broken/endpoints", "category": "broken", "severity": "warning", "target": t}
}
