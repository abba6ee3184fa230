package upgradescope.rules.kbstale_test

import data.upgradescope.rules.kbstale

test_target_past_horizon_is_a_warning if {
	fs := kbstale.findings with input as {"inventory": {}, "targets": ["1.38"]}
		with data.upgradescope.kb.meta as {"horizon": "1.37", "generatedFrom": "k8s.io/api v0.37.2", "citation": "c"}
	some f in fs
	f.key == "kb-stale"
	f.severity == "warning"
	f.title == "knowledge base does not cover Kubernetes 1.38 (newest known: 1.37)"
}

test_server_past_horizon_is_a_warning_even_for_an_older_target if {
	fs := kbstale.findings with input as {"inventory": {"serverVersion": "v1.39.1-eks-1"}, "targets": ["1.36"]}
		with data.upgradescope.kb.meta as {"horizon": "1.37", "generatedFrom": "g", "citation": "c"}
	some f in fs
	contains(f.title, "Kubernetes 1.39")
}

test_target_within_horizon_has_no_finding if {
	fs := kbstale.findings with input as {"inventory": {"serverVersion": "v1.36.0"}, "targets": ["1.37"]}
		with data.upgradescope.kb.meta as {"horizon": "1.37", "generatedFrom": "g", "citation": "c"}
	count(fs) == 0
}
