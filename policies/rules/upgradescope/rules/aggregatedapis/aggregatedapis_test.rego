package upgradescope.rules.aggregatedapis_test

import data.upgradescope.rules.aggregatedapis

judge(services) := fs if {
	fs := aggregatedapis.findings with input as {
		"inventory": {"source": "cluster", "preflight": {"apiServices": services}},
		"targets": ["1.35"],
	}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

metrics(extra) := object.union(
	{
		"object": {"name": "v1beta1.metrics.k8s.io"},
		"group": "metrics.k8s.io",
		"version": "v1beta1",
		"service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
	},
	extra,
)

test_an_apiservice_that_is_not_available_is_a_blocker_naming_it_and_its_service if {
	f := only(judge([metrics({
		"available": "False", "reason": "MissingEndpoints",
		"message": "endpoints for service/metrics-server in \"kube-system\" have no addresses",
	})]))
	f.key == "aggregated-api/unavailable/v1beta1.metrics.k8s.io"
	f.category == "aggregated-api"
	f.severity == "blocker"
	f.title == "APIService v1beta1.metrics.k8s.io (metrics.k8s.io/v1beta1) is not Available (MissingEndpoints): service kube-system/metrics-server"
	endswith(f.detail, "The condition says: endpoints for service/metrics-server in \"kube-system\" have no addresses")
	f.objects == [
		{"kind": "APIService", "name": "v1beta1.metrics.k8s.io"},
		{"kind": "Service", "namespace": "kube-system", "name": "metrics-server"},
	]
	f.namespaces == ["kube-system"]
	"https://github.com/kubernetes/kubernetes/issues/60807" in f.citations
}

test_only_an_available_condition_that_is_not_true_is_a_finding if {
	cases := [
		# [fields, want]
		[{"available": "False"}, 1],
		[{"available": "Unknown"}, 1],
		[{"available": "True"}, 0],
		[{}, 0], # no condition yet: nothing to judge
	]
	every c in cases {
		count(judge([metrics(c[0])])) == c[1]
	}
}

test_without_a_reason_or_message_the_title_and_detail_say_less if {
	f := only(judge([metrics({"available": "False"})]))
	f.title == "APIService v1beta1.metrics.k8s.io (metrics.k8s.io/v1beta1) is not Available: service kube-system/metrics-server"
	endswith(f.detail, "can stall when the upgrade restarts them.")
}

test_no_apiservices_no_findings if {
	count(judge([])) == 0
	count(aggregatedapis.findings) == 0 with input as {"inventory": {"source": "files"}, "targets": ["1.35"]}
}
