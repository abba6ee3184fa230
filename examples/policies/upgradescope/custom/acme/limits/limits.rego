# METADATA
# title: ACME production Deployments set resource limits
# description: |
#   ACME's platform team wants every container of a production Deployment (namespace
#   prod-*) to set resource limits before a node pool is upgraded and drained: a container
#   without them can starve its neighbours on the fewer nodes left. The probe
#   deployment-without-limits (../data.json) asks the collectors for every Deployment with a
#   container whose resources.limits is absent, and where it falls short.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
# custom:
#   category: acme-limits
package upgradescope.custom.acme.limits

# The observation is there only when the inventory observed the probe as ../data.json
# declares it; otherwise the report names the gap and the verdict is unknown.
observed := input.facts.probes["custom/acme/deployment-without-limits"]

in_prod(o) if startswith(object.get(o, "namespace", ""), "prod-")

# An observed object is a finding's object reference once what it found is taken out.
prod_objects := [object.remove(o, ["group", "values"]) |
	some o in observed.objects
	in_prod(o)
]

# METADATA
# description: One warning per target naming the production Deployments without limits.
findings contains f if {
	count(prod_objects) > 0
	some t in input.targets
	f := {
		"key": "acme-limits/prod-deployments-without-limits",
		"category": "acme-limits",
		"severity": "warning",
		"target": t,
		"title": sprintf("%d production Deployment(s) run containers without resource limits", [count(prod_objects)]),
		"detail": sprintf("Containers without limits: %s", [concat("; ", sort([where(o) | some o in observed.objects; in_prod(o)]))]),
		"remediation": "Set resources.limits on every container before the node pool upgrade (ACME policy PLAT-31).",
		"objects": prod_objects,
		"namespaces": sort({o.namespace | some o in prod_objects}),
		"citations": ["https://wiki.example.com/platform/PLAT-31"],
	}
}

where(o) := sprintf("%s/%s %s", [o.namespace, o.name, concat(", ", object.get(o, "values", []))])
