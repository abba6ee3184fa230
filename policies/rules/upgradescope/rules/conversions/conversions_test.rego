package upgradescope.rules.conversions_test

import data.upgradescope.rules.conversions

judge(crds) := fs if {
	fs := conversions.findings with input as {
		"inventory": {"source": "cluster", "preflight": {"conversions": crds}},
		"targets": ["1.35"],
	}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

widgets(svc) := object.union(
	{"crd": {"name": "widgets.example.com"}, "group": "example.com", "kind": "Widget"},
	svc,
)

service(extra) := {"service": object.union({"namespace": "widgets", "name": "converter", "port": 443}, extra)}

test_a_conversion_webhook_with_no_ready_endpoints_is_a_blocker_naming_the_crd_and_service if {
	f := only(judge([widgets(service({"found": true, "readyEndpoints": 0}))]))
	f.key == "crd-conversion/webhook-unavailable/widgets.example.com"
	f.category == "crd-conversion"
	f.severity == "blocker"
	f.title == "CustomResourceDefinition widgets.example.com (example.com Widget) converts through service widgets/converter, which has no ready endpoints"
	startswith(f.detail, "The API server calls this webhook whenever a Widget is read")
	f.objects == [
		{"kind": "CustomResourceDefinition", "name": "widgets.example.com"},
		{"kind": "Service", "namespace": "widgets", "name": "converter"},
	]
	f.namespaces == ["widgets"]
}

test_the_service_decides if {
	cases := [
		# [service, want]
		[service({"found": false}), 1],
		[service({"found": true, "readyEndpoints": 0}), 1],
		[service({"found": true, "readyEndpoints": 2}), 0],
		[service({}), 0], # files mode: no live state
		[{"url": true}, 0], # called by URL
	]
	every c in cases {
		count(judge([widgets(c[0])])) == c[1]
	}
}

test_a_missing_service_is_named_as_missing if {
	endswith(only(judge([widgets(service({"found": false}))])).title, "which does not exist")
}

test_no_conversions_no_findings if {
	count(judge([])) == 0
	count(conversions.findings) == 0 with input as {"inventory": {"source": "files"}, "targets": ["1.35"]}
}
