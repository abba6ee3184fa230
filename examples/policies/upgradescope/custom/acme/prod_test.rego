package upgradescope.custom.acme_test

import data.upgradescope.custom.acme

kb_apis := {"core/v1/Endpoints": {
	"group": "", "version": "v1", "kind": "Endpoints", "introduced": "1.0",
	"deprecated": "1.33", "stored": true, "citations": [],
}}

usage(namespaces) := {
	"group": "", "version": "v1", "kind": "Endpoints", "count": 1, "namespaces": namespaces,
	"objects": [{"namespace": ns, "name": "e"} | some ns, _ in namespaces],
}

findings_for(namespaces, target) := fs if {
	fs := acme.findings with input as {"inventory": {"apiUsage": [usage(namespaces)]}, "targets": [target]}
		with data.upgradescope.kb.apis as kb_apis
}

test_deprecated_api_in_prod_is_a_warning if {
	some f in findings_for({"prod-web": 1, "dev": 1}, "1.34")
	f.severity == "warning"
	f.namespaces == ["prod-web"]
	f.objects == [{"namespace": "prod-web", "name": "e"}]
}

test_deprecated_api_outside_prod_is_fine if {
	count(findings_for({"dev": 1}, "1.34")) == 0
}

test_not_yet_deprecated_is_fine if {
	count(findings_for({"prod-web": 1}, "1.32")) == 0
}
