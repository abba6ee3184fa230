package upgradescope.lib.preflight_test

import data.upgradescope.lib.preflight

test_named_lists_the_names_and_counts_the_rest if {
	preflight.named(["a", "b"], 0) == "a, b"
	preflight.named(["a"], 3) == "a and 3 more"
}

test_omitted_is_a_field_only_when_something_was_left_out if {
	preflight.omitted(2) == {"objectsOmitted": 2}
	preflight.omitted(0) == {}
}

test_a_webhooks_failure_policy_defaults_by_its_api_version if {
	preflight.failure_policy({"failurePolicy": "Ignore"}) == "Ignore"
	preflight.failure_policy({"apiVersion": "admissionregistration.k8s.io/v1"}) == "Fail"
	preflight.failure_policy({"apiVersion": "admissionregistration.k8s.io/v1beta1"}) == "Ignore"
	preflight.failure_policy({}) == "Fail"
}

test_a_service_is_down_only_when_live_state_says_so if {
	preflight.down({"found": false})
	preflight.down({"found": true, "readyEndpoints": 0})
	not preflight.down({"found": true, "readyEndpoints": 1})
	not preflight.down({"namespace": "a", "name": "b"})
	preflight.why_down({"found": false}) == "does not exist"
	preflight.why_down({"found": true, "readyEndpoints": 0}) == "has no ready endpoints"
}
