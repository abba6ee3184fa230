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

# Audit callers ----------------------------------------------------------------------------

since := "2026-10-30T12:00:00Z"

flowschemas := {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "resource": "flowschemas"}

# A caller of flowschemas; fields override the defaults.
caller(fields) := object.union_n([
	flowschemas,
	{
		"verb": "list", "user": "system:serviceaccount:ops:reporter", "serviceAccount": "ops/reporter",
		"userAgent": "reporter/1.0", "count": 3, "firstSeen": "2026-11-01T08:00:00Z", "lastSeen": "2026-11-29T11:00:00Z",
	},
	fields,
])

audit(callers, omitted) := {"auditCalls": {
	"since": since, "events": 10, "requests": 10, "deprecatedRequests": 10,
	"callers": callers, "omitted": omitted,
}}

findings(inventory, t) := fs if {
	fs := calls.findings with input as {"inventory": object.union({"apiUsage": []}, inventory), "targets": [t]}
}

only(inventory, t) := f if {
	[f] := [f | some f in findings(inventory, t)]
}

test_a_caller_of_an_api_the_target_removes_is_a_blocker_naming_it if {
	f := only(audit([caller({"sourceRanges": ["10.0.1.0/24"]})], []), "1.32")
	f.key == "deprecated-api-in-use/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas"
	f.severity == "blocker"
	f.title == "Requests still call flowcontrol.apiserver.k8s.io/v1beta3 flowschemas, removed in 1.32"
	f.detail == "The audit log names who calls it: reporter/1.0 (service account ops/reporter) list, 3 calls, last seen 2026-11-29T11:00:00Z."
	f.remediation == "Move reporter/1.0 (service account ops/reporter) to flowcontrol.apiserver.k8s.io/v1 flowschemas, which Kubernetes 1.32 serves."
	f.callers == [{
		"userAgent": "reporter/1.0", "user": "system:serviceaccount:ops:reporter", "serviceAccount": "ops/reporter",
		"verb": "list", "count": 3, "firstSeen": "2026-11-01T08:00:00Z", "lastSeen": "2026-11-29T11:00:00Z",
		"sourceRanges": ["10.0.1.0/24"],
	}]
	not f.callersOmitted
	"https://kubernetes.io/docs/reference/labels-annotations-taints/audit-annotations/#k8s-io-deprecated" in f.citations
}

test_a_caller_is_judged_by_the_removal_like_a_metric_row if {
	cases := {"1.31": "warning", "1.30": "info", "1.33": "blocker"}
	every t, severity in cases {
		only(audit([caller({})], []), t).severity == severity
	}
}

test_the_callers_removed_release_stands_in_for_an_api_the_knowledge_base_does_not_know if {
	widgets := {"group": "example.com", "version": "v1alpha1", "resource": "widgets", "subresource": "status", "removedRelease": "1.34"}
	f := only(audit([caller(widgets)], []), "1.34")
	f.key == "deprecated-api-in-use/example.com/v1alpha1/widgets/status"
	f.severity == "blocker"
	f.title == "Requests still call example.com/v1alpha1 widgets/status, removed in 1.34"
	f.detail == "The audit log names who calls it: reporter/1.0 (service account ops/reporter) list status, 3 calls, last seen 2026-11-29T11:00:00Z."
	f.remediation == concat("", [
		"Move reporter/1.0 (service account ops/reporter) off example.com/v1alpha1 widgets/status: ",
		"no replacement that Kubernetes 1.34 serves is known.",
	])
	f.callers[0].subresource == "status"
	only(audit([caller(object.remove(widgets, ["removedRelease"]))], []), "1.34").severity == "info"
}

test_callers_last_seen_before_the_window_are_info if {
	old := caller({"lastSeen": "2026-10-30T11:59:59Z"})
	f := only(audit([old], []), "1.32")
	f.severity == "info"
	f.title == "No request called flowcontrol.apiserver.k8s.io/v1beta3 flowschemas since 2026-10-30T12:00:00Z, removed in 1.32"
	f.detail == concat("", [
		"No call was seen since 2026-10-30T12:00:00Z, the start of the audit window; the last caller was ",
		"reporter/1.0 (service account ops/reporter) list, 3 calls, last seen 2026-10-30T11:59:59Z.",
	])
	only(audit([caller({"lastSeen": since})], []), "1.32").severity == "blocker"
}

test_one_call_in_the_window_keeps_the_severity if {
	old := caller({"lastSeen": "2026-09-01T00:00:00Z", "userAgent": "old/1"})
	only(audit([old, caller({})], []), "1.32").severity == "blocker"
	row := {"group": flowschemas.group, "version": "v1beta3", "resource": "flowschemas", "callers": 1, "calls": 2, "lastSeen": "2026-11-01T00:00:00Z"}
	only(audit([old], [row]), "1.32").severity == "blocker"
}

test_the_metric_row_keeps_its_severity_when_the_callers_are_old if {
	inv := object.union(audit([caller({"lastSeen": "2026-09-01T00:00:00Z"})], []), {"deprecatedCalls": [flowschemas]})
	f := only(inv, "1.32")
	f.severity == "blocker"
	f.title == "Requests still call flowcontrol.apiserver.k8s.io/v1beta3 flowschemas, removed in 1.32"
	startswith(f.detail, "The apiserver counted requests to this deprecated API since it started. No call was seen since 2026-10-30T12:00:00Z")
}

test_a_metric_row_and_callers_of_one_api_make_one_finding if {
	inv := object.union(audit([caller({})], []), {"deprecatedCalls": [object.union(flowschemas, {"removedRelease": "1.32"})]})
	f := only(inv, "1.31")
	f.severity == "warning"
	f.detail == concat(" ", [
		"The apiserver counted requests to this deprecated API since it started.",
		"The audit log names who calls it: reporter/1.0 (service account ops/reporter) list, 3 calls, last seen 2026-11-29T11:00:00Z.",
	])
	count(f.callers) == 1
}

test_callers_are_listed_busiest_first_ten_of_them if {
	cs := array.concat(
		[caller({"userAgent": sprintf("agent-%02d", [i]), "count": i}) | some i in numbers.range(1, 11)],
		[
			caller({"userAgent": "b-late", "count": 11, "lastSeen": "2026-11-29T12:00:00Z"}),
			caller({"userAgent": "a-tied", "count": 11, "lastSeen": "2026-11-29T12:00:00Z"}),
		],
	)
	f := only(audit(cs, []), "1.32")
	[c.userAgent | some c in f.callers] == [
		"a-tied", "b-late", "agent-11", "agent-10", "agent-09", "agent-08", "agent-07", "agent-06", "agent-05", "agent-04",
	]
	f.callersOmitted == {"callers": 3, "calls": 6}
	endswith(f.detail, "; and 10 more callers (55 calls).")
	contains(f.remediation, "starting with a-tied (service account ops/reporter), the busiest")
}

test_omitted_rows_count_the_callers_and_calls_not_listed if {
	row := object.union(flowschemas, {"callers": 4, "calls": 40, "lastSeen": "2026-11-28T00:00:00Z"})
	f := only(audit([caller({})], [row]), "1.32")
	f.callersOmitted == {"callers": 4, "calls": 40}
	endswith(f.detail, "last seen 2026-11-29T11:00:00Z; and 4 more callers (40 calls).")
	f.remediation == concat("", [
		"Move the callers to flowcontrol.apiserver.k8s.io/v1 flowschemas, which Kubernetes 1.32 serves, ",
		"starting with reporter/1.0 (service account ops/reporter), the busiest.",
	])
}

test_calls_of_callers_the_reading_could_not_track_are_counted_as_calls if {
	row := object.union(flowschemas, {"callers": 0, "calls": 5, "lastSeen": "2026-11-28T00:00:00Z"})
	f := only(audit([caller({})], [row]), "1.32")
	f.callersOmitted == {"callers": 0, "calls": 5}
	endswith(f.detail, "; and 5 more calls.")
}

test_an_api_only_omitted_rows_name_is_judged_and_counted if {
	row := object.union(flowschemas, {"callers": 2, "calls": 7, "lastSeen": "2026-11-28T00:00:00Z"})
	f := only(audit([], [row]), "1.32")
	f.severity == "blocker"
	f.detail == "The audit log counted 2 callers (7 calls) without listing them, the last at 2026-11-28T00:00:00Z."
	f.callersOmitted == {"callers": 2, "calls": 7}
	not f.callers
	old := only(audit([], [object.union(row, {"lastSeen": "2026-01-01T00:00:00Z"})]), "1.32")
	old.severity == "info"
	startswith(old.detail, "No call was seen since 2026-10-30T12:00:00Z, the start of the audit window; the audit log counted 2 callers")
}

test_a_caller_without_a_service_account_is_named_by_user_and_agent if {
	f := only(audit([caller({"serviceAccount": "", "user": "alice", "userAgent": ""})], []), "1.32")
	startswith(f.detail, "The audit log names who calls it: no user agent (user alice) list")
}

test_the_detail_names_three_callers if {
	cs := [caller({"userAgent": sprintf("agent-%d", [i]), "count": i}) | some i in numbers.range(1, 4)]
	f := only(audit(cs, []), "1.32")
	f.detail == concat("", [
		"The audit log names who calls it: ",
		"agent-4 (service account ops/reporter) list, 4 calls, last seen 2026-11-29T11:00:00Z; ",
		"agent-3 (service account ops/reporter) list, 3 calls, last seen 2026-11-29T11:00:00Z; ",
		"agent-2 (service account ops/reporter) list, 2 calls, last seen 2026-11-29T11:00:00Z; ",
		"and 1 more caller (1 call).",
	])
	not f.callersOmitted
}

test_callers_at_an_api_with_objects_are_folded_into_their_finding if {
	ingresses := {"group": "extensions", "version": "v1beta1", "resource": "ingresses"}
	inv := object.union(
		audit([caller(ingresses), caller(object.union(ingresses, {"subresource": "status", "userAgent": "nginx/0.30", "count": 9}))], []),
		{"apiUsage": [{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"web": 1}}]},
	)
	judge(inv, "1.22") == set()
	fs := apis.findings with input as {"inventory": inv, "targets": ["1.22"]}
	some f in fs
	f.key == "removed-api/extensions/v1beta1/Ingress"
	[c.userAgent | some c in f.callers] == ["nginx/0.30", "reporter/1.0"]
	f.callers[0].subresource == "status"
	f.detail == concat("", [
		"by namespace: web (1). The audit log names who calls it: ",
		"nginx/0.30 (service account ops/reporter) list status, 9 calls, last seen 2026-11-29T11:00:00Z; ",
		"reporter/1.0 (service account ops/reporter) list, 3 calls, last seen 2026-11-29T11:00:00Z.",
	])
}

test_an_object_finding_without_callers_keeps_its_detail if {
	inv := {"apiUsage": [{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"": 1}}]}
	fs := apis.findings with input as {"inventory": inv, "targets": ["1.22"]}
	some f in fs
	f.detail == ""
	not f.callers
}

test_the_removal_the_metric_announces_stands_in_for_an_unknown_api if {
	widgets := {"group": "example.com", "version": "v1alpha1", "resource": "widgets", "removedRelease": "1.34"}
	only({"deprecatedCalls": [widgets]}, "1.34").severity == "blocker"
	only(audit([], [object.union(widgets, {"callers": 1, "calls": 1, "lastSeen": since})]), "1.34").severity == "blocker"
}

test_core_apis_and_unannounced_removals_read_as_written if {
	componentstatuses := {"group": "", "version": "v1", "resource": "componentstatuses"}
	f := only(audit([caller(object.union(componentstatuses, {"lastSeen": "2026-01-01T00:00:00Z"}))], []), "1.34")
	f.key == "deprecated-api-in-use/core/v1/componentstatuses"
	f.title == "No request called v1 componentstatuses since 2026-10-30T12:00:00Z, removal not announced"
}

test_callers_of_an_api_without_a_replacement_are_asked_off_it if {
	widgets := {"group": "example.com", "version": "v1alpha1", "resource": "widgets", "user": "", "serviceAccount": ""}
	cs := [
		caller(object.union(widgets, {"userAgent": "a", "lastSeen": "2026-01-01T00:00:00Z"})),
		caller(object.union(widgets, {"userAgent": "b", "count": 1})),
	]
	f := only(audit(cs, []), "1.34")
	f.remediation == concat("", [
		"Move the callers off example.com/v1alpha1 widgets, starting with a (no user), the busiest: ",
		"no replacement that Kubernetes 1.34 serves is known.",
	])
	f.detail == concat("", [
		"The audit log names who calls it: a (no user) list, 3 calls, last seen 2026-01-01T00:00:00Z; ",
		"b (no user) list, 1 call, last seen 2026-11-29T11:00:00Z.",
	])
	old := only(audit([cs[0], object.union(cs[1], {"lastSeen": "2026-01-01T00:00:00Z"})], []), "1.34")
	contains(old.detail, "; the last callers were: a (no user)")
}

test_one_more_caller_and_one_more_call_are_singular if {
	cs := [caller({"userAgent": sprintf("agent-%d", [i])}) | some i in numbers.range(1, 3)]
	row := object.union(flowschemas, {"callers": 0, "calls": 1, "lastSeen": since})
	endswith(only(audit(cs, [row]), "1.32").detail, "; and 1 more call.")
	one := only(audit([], [object.union(row, {"callers": 1})]), "1.32")
	one.detail == "The audit log counted 1 caller (1 call) without listing them, the last at 2026-10-30T12:00:00Z."
}

ingress_usage(namespaces) := [{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": namespaces}]

test_folded_callers_join_every_detail_of_the_object_findings if {
	row := {"group": "extensions", "version": "v1beta1", "resource": "ingresses", "callers": 2, "calls": 5, "lastSeen": since}
	inv := object.union(audit([], [row]), {"apiUsage": ingress_usage({"": 1}), "apiAuthorshipUnknown": ingress_usage({"": 1})})
	fs := apis.findings with input as {"inventory": inv, "targets": ["1.22"]}
	details := {f.key: f.detail | some f in fs}
	details["removed-api/extensions/v1beta1/Ingress"] == "The audit log counted 2 callers (5 calls) without listing them, the last at 2026-10-30T12:00:00Z."
	endswith(
		details["deprecated-api/extensions/v1beta1/Ingress/authorship-unknown"],
		"writes them through this version. The audit log counted 2 callers (5 calls) without listing them, the last at 2026-10-30T12:00:00Z.",
	)
	every f in fs {
		f.callersOmitted == {"callers": 2, "calls": 5}
	}
}
