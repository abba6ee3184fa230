package upgradescope.rules.calls_test

import data.upgradescope.rules.apis
import data.upgradescope.rules.calls

call := {"group": "extensions", "version": "v1beta1", "resource": "ingresses", "removedRelease": "1.22"}

judge(inventory, t) := {[f.key, f.severity] | some f in fs} if {
	fs := calls.findings with input as {"inventory": object.union({"apiUsage": []}, inventory), "targets": [t]}
}

test_a_call_at_an_api_removed_by_the_target_is_a_blocker if {
	judge({"deprecatedCalls": [call]}, "1.22") == {["deprecated-api-in-use/extensions/v1beta1/ingresses", "blocker"]}
}

test_a_call_removed_in_the_next_minor_is_a_warning if {
	judge({"deprecatedCalls": [call]}, "1.21") == {["deprecated-api-in-use/extensions/v1beta1/ingresses", "warning"]}
}

test_a_call_removed_later_or_never_is_info if {
	judge({"deprecatedCalls": [call]}, "1.19") == {["deprecated-api-in-use/extensions/v1beta1/ingresses", "info"]}
	unknown := {"group": "example.com", "version": "v1alpha1", "resource": "widgets", "subresource": "status"}
	judge({"deprecatedCalls": [unknown]}, "1.30") == {["deprecated-api-in-use/example.com/v1alpha1/widgets/status", "info"]}
}

test_the_knowledge_base_overrides_the_metric_label if {
	wrong := object.union(call, {"removedRelease": "1.40"})
	judge({"deprecatedCalls": [wrong]}, "1.30") == {["deprecated-api-in-use/extensions/v1beta1/ingresses", "blocker"]}
}

test_a_call_at_an_api_with_objects_is_folded_into_their_finding if {
	inv := {
		"deprecatedCalls": [call, object.union(call, {"subresource": "status"})],
		"apiUsage": [{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"web": 1}}],
	}
	judge(inv, "1.30") == set()
	fs := apis.findings with input as {"inventory": inv, "targets": ["1.30"]}
	some f in fs
	f.calls == ["ingresses", "ingresses/status"]
}
