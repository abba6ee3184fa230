package upgradescope.rules.apis_test

import data.upgradescope.rules.apis

usage(group, version, kind) := {
	"group": group, "version": version, "kind": kind, "count": 2,
	"namespaces": {"web": 1, "": 1},
	"objects": [{"namespace": "web", "name": "a", "file": "a.yaml", "line": 3}, {"name": "b"}],
}

judge(u, target) := fs if {
	fs := apis.findings with input as {"inventory": {"apiUsage": [u]}, "targets": [target]}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

test_removed_at_or_before_target_is_a_blocker if {
	f := only(judge(usage("extensions", "v1beta1", "Ingress"), "1.22"))
	f.key == "removed-api/extensions/v1beta1/Ingress"
	f.severity == "blocker"
	f.category == "removed-api"
	f.title == "extensions/v1beta1 Ingress removed in 1.22 (2 objects)"
	f.namespaces == ["web"]
	count(f.objects) == 2
}

test_the_detail_says_where_the_objects_are_without_repeating_the_title if {
	f := only(judge(usage("extensions", "v1beta1", "Ingress"), "1.22"))
	f.detail == "by namespace: no namespace (1), web (1)"
}

test_cluster_scoped_objects_have_no_detail_to_add if {
	u := json.patch(usage("policy", "v1beta1", "PodSecurityPolicy"), [{"op": "replace", "path": "/namespaces", "value": {"": 2}}])
	f := only(judge(u, "1.37"))
	f.detail == ""
}

test_remediation_names_the_replacement_the_target_serves if {
	f := only(judge(usage("extensions", "v1beta1", "Ingress"), "1.37"))
	contains(f.remediation, "networking.k8s.io/v1 Ingress")
}

test_replacement_chain_is_followed_past_removed_links if {
	f := only(judge(usage("flowcontrol.apiserver.k8s.io", "v1beta2", "FlowSchema"), "1.33"))
	contains(f.remediation, "flowcontrol.apiserver.k8s.io/v1 FlowSchema")
}

test_removed_in_the_next_minor_is_a_warning if {
	f := only(judge(usage("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema"), "1.31"))
	f.severity == "warning"
	f.key == "removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"
	contains(f.title, "the minor after 1.31")
}

test_deprecated_not_removed_soon_is_info if {
	f := only(judge(usage("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema"), "1.29"))
	f.severity == "info"
	f.key == "deprecated-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"
	contains(f.title, "deprecated since 1.29, removal in 1.32")
}

test_future_deprecation_is_titled_as_such if {
	f := only(judge(usage("", "v1", "Endpoints"), "1.30"))
	f.severity == "info"
	f.key == "deprecated-api/core/v1/Endpoints"
	contains(f.title, "(future deprecation)")
}

test_removal_past_the_horizon_is_projected if {
	kb := {
		"apis": {"example.io/v1beta1/Widget": {
			"group": "example.io", "version": "v1beta1", "kind": "Widget", "introduced": "1.30",
			"deprecated": "1.33", "removed": "1.40", "stored": true, "citations": ["https://example.io"],
		}},
		"meta": {"horizon": "1.37"},
	}
	fs := judge(usage("example.io", "v1beta1", "Widget"), "1.34") with data.upgradescope.kb as kb
	f := only(fs)
	contains(f.title, "removal in 1.40 (projected)")
}

test_version_not_served_yet_is_a_blocker if {
	f := only(judge(usage("resource.k8s.io", "v1", "ResourceClaim"), "1.33"))
	f.severity == "blocker"
	f.key == "removed-api/resource.k8s.io/v1/ResourceClaim/unserved"
	contains(f.title, "not served until 1.34")
	contains(f.remediation, "resource.k8s.io/v1beta1")
}

test_stable_api_has_no_finding if {
	count(judge(usage("apps", "v1", "Deployment"), "1.37")) == 0
}

test_unknown_kind_has_no_finding if {
	count(judge(usage("example.com", "v1", "Gadget"), "1.37")) == 0
}

# Request-only kinds are never stored, but a manifest that creates one at a removed API is
# refused by the target all the same.
test_a_request_only_kind_at_a_removed_api_is_a_blocker_like_any_other if {
	f := only(judge(usage("authentication.k8s.io", "v1beta1", "TokenReview"), "1.33"))
	f.key == "removed-api/authentication.k8s.io/v1beta1/TokenReview"
	f.category == "removed-api"
	f.severity == "blocker"
	f.title == "authentication.k8s.io/v1beta1 TokenReview removed in 1.22 (2 objects)"
	f.objects[0] == {"namespace": "web", "name": "a", "file": "a.yaml", "line": 3}
	contains(f.remediation, "authentication.k8s.io/v1 TokenReview")
}

test_every_request_only_review_kind_is_judged if {
	every kind in ["SubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview"] {
		f := only(judge(usage("authorization.k8s.io", "v1beta1", kind), "1.37"))
		f.key == sprintf("removed-api/authorization.k8s.io/v1beta1/%s", [kind])
		f.severity == "blocker"
	}
}

test_a_request_only_kind_the_target_serves_has_no_finding if {
	count(judge(usage("authentication.k8s.io", "v1", "TokenReview"), "1.37")) == 0
}

test_one_finding_per_target if {
	fs := apis.findings with input as {
		"inventory": {"apiUsage": [usage("extensions", "v1beta1", "Ingress")]},
		"targets": ["1.36", "1.37"],
	}
	{f.target | some f in fs} == {"1.36", "1.37"}
}

test_keys_never_carry_counts if {
	u1 := object.union(usage("extensions", "v1beta1", "Ingress"), {"count": 1})
	u5 := object.union(usage("extensions", "v1beta1", "Ingress"), {"count": 5})
	only(judge(u1, "1.37")).key == only(judge(u5, "1.37")).key
}

test_objects_without_an_attributable_writer_are_info if {
	u := usage("extensions", "v1beta1", "Ingress")
	fs := apis.findings with input as {"inventory": {"apiUsage": [], "apiAuthorshipUnknown": [u]}, "targets": ["1.37"]}
	some f in fs
	f.key == "deprecated-api/extensions/v1beta1/Ingress/authorship-unknown"
	f.severity == "info"
	contains(f.title, "removed in 1.22")
}
