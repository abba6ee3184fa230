# METADATA
# title: Every namespace names its team
# description: |
#   A test fixture, not a shipped pack: a warning for each namespace the inventory records
#   without a team. It fires on the inputs the built-in tests use, so `opa test` of this pack
#   together with policies/rules and policies/kb fails if a built-in test lets custom packs
#   leak into what it asserts.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
# custom:
#   category: team-label
package upgradescope.custom.teamlabel

# METADATA
# description: A warning per target and namespace without a team.
# scope: document
findings contains f if {
	some ns in input.inventory.namespaces
	object.get(ns, "team", "") == ""
	some t in input.targets
	f := {
		"key": sprintf("team-label/%s", [ns.name]),
		"category": "team-label",
		"severity": "warning",
		"target": t,
		"title": sprintf("Namespace %s has no team", [ns.name]),
		"remediation": "Label the namespace with its owning team.",
		"objects": [],
		"namespaces": [ns.name],
		"citations": [],
	}
}

# Every target with a finding, even without namespaces: an inventory with none at all is
# one nobody can attribute, and the built-in tests' inputs mostly have none.
findings contains f if {
	count(object.get(input.inventory, "namespaces", [])) == 0
	some t in input.targets
	f := {
		"key": "team-label/no-namespaces",
		"category": "team-label",
		"severity": "warning",
		"target": t,
		"title": "The inventory records no namespace and so no team",
		"remediation": "Scan with --team-label so namespaces carry their team.",
		"objects": [],
		"namespaces": [],
		"citations": [],
	}
}
