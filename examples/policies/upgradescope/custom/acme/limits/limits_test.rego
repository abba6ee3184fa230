package upgradescope.custom.acme.limits_test

import data.upgradescope.custom.acme.limits

observation(objects) := {"custom/acme/deployment-without-limits": {
	"id": "custom/acme/deployment-without-limits", "available": true,
	"examined": 3, "count": count(objects), "objects": objects,
}}

deployment(ns, name) := {
	"group": "apps", "kind": "Deployment", "namespace": ns, "name": name,
	"file": "prod.yaml", "line": 3, "values": ["spec.template.spec.containers[0].resources"],
}

findings_for(objects) := fs if {
	fs := limits.findings with input as {"targets": ["1.37"], "facts": {"probes": observation(objects)}}
}

test_a_prod_deployment_without_limits_is_a_warning_naming_it if {
	fs := findings_for([deployment("prod-shop", "cart"), deployment("dev", "cart")])
	count(fs) == 1
	some f in fs
	f.severity == "warning"
	f.target == "1.37"
	f.objects == [{"kind": "Deployment", "namespace": "prod-shop", "name": "cart", "file": "prod.yaml", "line": 3}]
	f.namespaces == ["prod-shop"]
	contains(f.detail, "prod-shop/cart spec.template.spec.containers[0].resources")
}

test_deployments_in_other_namespaces_are_fine if {
	count(findings_for([deployment("dev", "cart"), deployment("production", "x")])) == 0
}

test_a_live_object_without_file_is_kept if {
	some f in findings_for([{"group": "apps", "kind": "Deployment", "namespace": "prod-a", "name": "b"}])
	f.objects == [{"kind": "Deployment", "namespace": "prod-a", "name": "b"}]
}

test_without_the_observation_there_is_no_finding if {
	fs := limits.findings with input as {"targets": ["1.37"], "facts": {"probes": {}}}
	count(fs) == 0
}
