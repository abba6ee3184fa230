package upgradescope.report_test

import data.upgradescope.report

finding(key, severity) := {
	"key": key, "category": split(key, "/")[0], "severity": severity, "target": "1.37",
	"title": key, "objects": [], "namespaces": ["web"], "citations": [],
}

with_objects(f, objects) := object.union(f, {"objects": objects, "objectsOmitted": 0})

base_input := {
	"inventory": {"capabilities": {"api-usage": {"available": true}}, "apiUsage": []},
	"targets": ["1.37"],
	"now": "2026-11-29T12:00:00Z",
	"ignore": [],
}

# object.union merges recursively; replace the inventory whole.
with_inventory(inv) := object.union(object.remove(base_input, ["inventory"]), {"inventory": inv})

meta := {"horizon": "1.37", "generatedFrom": "g", "citation": "c"}

# The report with the built-in and the custom packs' findings both replaced: a custom pack
# loaded beside these tests (opa test mypack policies/rules policies/kb) must not change what
# they assert. Every test reads the report through this.
report_of(builtin, custom, inp) := out if {
	out := report.result with data.upgradescope.rules as builtin
		with data.upgradescope.custom as custom
		with data.upgradescope.kb.meta as meta
		with input as inp
}

result_for(findings, inp) := report_of({"test": {"findings": findings}}, {}, inp).targets[0]

test_score_formula_and_caps if {
	cases := [
		[0, 0, 100],
		[1, 0, 75],
		[0, 1, 95],
		[2, 3, 35],
		[3, 0, 25],
		[4, 0, 25],
		[0, 5, 80],
		[0, 9, 80],
		[5, 9, 5],
	]
	every c in cases {
		report.score({"blocker": c[0], "warning": c[1], "info": 0}) == c[2]
	}
}

test_info_never_counts_in_the_score if {
	report.score({"blocker": 0, "warning": 0, "info": 40}) == 100
}

test_blocker_makes_the_verdict_blocked if {
	r := result_for({finding("removed-api/x", "blocker")}, base_input)
	r.verdict == "blocked"
	r.blockers == 1
	r.score == 75
}

test_no_findings_and_all_assessed_is_ready if {
	r := result_for(set(), base_input)
	r.verdict == "ready"
	r.score == 100
}

test_missing_api_usage_capability_is_unknown if {
	inp := with_inventory({"capabilities": {}, "apiUsage": []})
	r := result_for(set(), inp)
	r.verdict == "unknown"
	r.notAssessed == [{"capability": "api-usage", "required": true, "reason": "not collected"}]
}

test_partial_api_usage_is_a_required_gap if {
	caps := {"api-usage": {
		"available": true, "partial": true,
		"reason": "1 document(s) could not be decoded", "skipped": ["a.yaml:3"],
	}}
	inp := with_inventory({"capabilities": caps, "apiUsage": []})
	r := result_for(set(), inp)
	r.verdict == "unknown"
	r.notAssessed[0].partial
	r.notAssessed[0].skipped == ["a.yaml:3"]
}

test_optional_capability_gap_leaves_the_verdict_ready if {
	caps := {"api-usage": {"available": true}, "helm": {"available": false, "reason": "files mode"}}
	inp := with_inventory({"capabilities": caps, "apiUsage": []})
	r := result_for(set(), inp)
	r.verdict == "ready"
	r.notAssessed == [{"capability": "helm", "required": false, "reason": "files mode"}]
}

live_caps[name] := {"available": true} if {
	some name in {
		"api-usage", "versions", "addons", "disruption-budgets", "pods", "admission-webhooks",
		"service-endpoints", "api-services", "node-state", "component-flags",
	}
}

test_a_live_cluster_with_every_preflight_capability_is_ready if {
	r := result_for(set(), with_inventory({"source": "cluster", "capabilities": live_caps, "apiUsage": []}))
	r.verdict == "ready"
	r.notAssessed == []
}

test_a_live_preflight_capability_that_could_not_be_read_makes_the_verdict_unknown if {
	every name in ["disruption-budgets", "pods", "admission-webhooks", "service-endpoints", "api-services", "node-state", "component-flags"] {
		caps := object.union(live_caps, {name: {"available": false, "reason": "forbidden"}})
		r := result_for(set(), with_inventory({"source": "cluster", "capabilities": caps, "apiUsage": []}))
		r.verdict == "unknown"
		r.notAssessed == [{"capability": name, "required": true, "reason": "forbidden"}]
	}
}

test_an_older_agents_live_inventory_without_the_preflight_capabilities_is_unknown if {
	caps := {"api-usage": {"available": true}, "versions": {"available": true}, "addons": {"available": true}}
	r := result_for(set(), with_inventory({"source": "cluster", "capabilities": caps, "apiUsage": []}))
	r.verdict == "unknown"
	{g.capability | some g in r.notAssessed; g.required} == {
		"disruption-budgets", "pods", "admission-webhooks", "service-endpoints",
		"api-services", "node-state", "component-flags",
	}
}

rehearsed := {"target": "1.37", "serverVersion": "v1.37.0", "server": "kube-binaries", "objects": 2, "accepted": 1}

test_a_rehearsal_that_could_not_replay_every_object_makes_the_verdict_unknown if {
	partial := {"available": true, "partial": true, "reason": "1 of 2 objects not replayed (1 crd missing)", "skipped": ["Widget shop/w (w.yaml:1): crd missing"]}
	inv := {"source": "files", "capabilities": {"api-usage": {"available": true}, "rehearsal": partial}, "apiUsage": [], "rehearsal": rehearsed}
	r := result_for(set(), with_inventory(inv))
	r.verdict == "unknown"
	r.notAssessed == [{
		"capability": "rehearsal", "required": true, "reason": "1 of 2 objects not replayed (1 crd missing)",
		"partial": true, "skipped": ["Widget shop/w (w.yaml:1): crd missing"],
	}]
}

test_a_rehearsal_is_required_only_when_the_inventory_holds_one if {
	without := result_for(set(), with_inventory({"source": "files", "capabilities": {"api-usage": {"available": true}}, "apiUsage": []}))
	without.verdict == "ready"
	missing := result_for(set(), with_inventory({"source": "files", "capabilities": {"api-usage": {"available": true}}, "apiUsage": [], "rehearsal": rehearsed}))
	missing.verdict == "unknown"
	missing.notAssessed == [{"capability": "rehearsal", "required": true, "reason": "not collected"}]
}

test_kubelet_config_is_never_required if {
	caps := object.union(live_caps, {"kubelet-config": {"available": false, "reason": "nodes/proxy not granted"}})
	r := result_for(set(), with_inventory({"source": "cluster", "capabilities": caps, "apiUsage": []}))
	r.verdict == "ready"
	r.notAssessed == [{"capability": "kubelet-config", "required": false, "reason": "nodes/proxy not granted"}]
}

test_live_only_capabilities_are_optional_in_files_mode if {
	caps := {
		"api-usage": {"available": true},
		"node-state": {"available": false, "reason": "live only"},
		"api-services": {"available": false, "reason": "live only"},
	}
	r := result_for(set(), with_inventory({"source": "files", "capabilities": caps, "apiUsage": []}))
	r.verdict == "ready"
	count(r.notAssessed) == 2
	every g in r.notAssessed {
		not g.required
	}
}

test_a_declared_probe_not_observed_is_a_required_gap if {
	inp := object.union(base_input, {"facts": {"probeGaps": {"kb/pod-docker-socket": "not collected"}}})
	r := result_for(set(), inp)
	r.verdict == "unknown"
	r.notAssessed == [{"capability": "probes/kb/pod-docker-socket", "required": true, "reason": "not collected"}]
}

test_a_blocker_outweighs_a_probe_gap if {
	inp := object.union(base_input, {"facts": {"probeGaps": {"custom/acme/limits": "not observed: forbidden"}}})
	r := result_for({finding("removed-api/x", "blocker")}, inp)
	r.verdict == "blocked"
	count(r.notAssessed) == 1
}

test_target_past_horizon_is_a_required_kb_coverage_gap if {
	inp := object.union(base_input, {"targets": ["1.38"]})
	r := report_of({}, {}, inp).targets[0]
	r.verdict == "unknown"
	some g in r.notAssessed
	g.capability == "kb-coverage"
	g.required
}

test_findings_sorted_by_severity_category_key if {
	fs := {
		finding("deprecated-api/b", "info"),
		finding("removed-api/z", "blocker"),
		finding("removed-api/a", "warning"),
		finding("kb-stale", "warning"),
		finding("chart-incompat/a", "blocker"),
	}
	r := result_for(fs, base_input)
	want := ["chart-incompat/a", "removed-api/z", "kb-stale", "removed-api/a", "deprecated-api/b"]
	[f.key | some f in r.findings] == want
}

test_ignore_by_key_suppresses_the_whole_finding if {
	inp := object.union(base_input, {"ignore": [{"key": "removed-api/x", "reason": "tracked in JIRA-1"}]})
	r := result_for({finding("removed-api/x", "blocker")}, inp)
	r.verdict == "ready"
	r.suppressedCount == 1
	r.suppressed[0].suppression.reason == "tracked in JIRA-1"
}

test_ignore_by_category if {
	inp := object.union(base_input, {"ignore": [{"category": "removed-api", "reason": "r"}]})
	r := result_for({finding("removed-api/x", "blocker"), finding("deprecated-api/y", "info")}, inp)
	[f.key | some f in r.findings] == ["deprecated-api/y"]
}

test_expired_rule_stops_applying_and_is_reported if {
	inp := object.union(base_input, {"ignore": [{"key": "removed-api/x", "reason": "r", "expires": "2026-11-28"}]})
	r := result_for({finding("removed-api/x", "blocker")}, inp)
	r.blockers == 1
	expired := report.expired_ignores with input as inp
	expired[0].index == 0
}

test_rule_applies_through_its_expiry_day if {
	inp := object.union(base_input, {"ignore": [{"key": "removed-api/x", "reason": "r", "expires": "2026-11-29"}]})
	r := result_for({finding("removed-api/x", "blocker")}, inp)
	r.blockers == 0
}

test_the_first_rule_in_the_file_aimed_at_a_finding_takes_it_whether_by_key_or_category if {
	rules := [
		{"key": "removed-api/other", "reason": "another finding"},
		{"category": "removed-api", "namespace": "db", "reason": "category, selector not matching"},
		{"category": "removed-api", "reason": "category, first"},
		{"key": "removed-api/x", "reason": "key, later"},
	]
	r := result_for({finding("removed-api/x", "blocker")}, object.union(base_input, {"ignore": rules}))
	r.suppressed[0].suppression == {"source": "config", "index": 2, "reason": "category, first", "expires": ""}
}

test_an_object_is_taken_by_the_first_rule_aimed_at_its_finding_whose_selectors_match if {
	f := with_objects(finding("removed-api/x", "blocker"), [{"namespace": "web", "name": "a"}])
	rules := [
		{"key": "removed-api/y", "namespace": "web", "reason": "aimed elsewhere"},
		{"category": "removed-api", "namespace": "db", "reason": "does not match"},
		{"key": "removed-api/x", "namespace": "w*", "reason": "first match"},
		{"category": "removed-api", "name": "a", "reason": "later match"},
	]
	r := result_for({f}, object.union(base_input, {"ignore": rules}))
	r.suppressed[0].suppression.index == 2
}

test_many_rules_aimed_at_other_findings_take_nothing if {
	rules := [{"key": sprintf("removed-api/y%d", [i]), "namespace": "*", "reason": "r"} | some i in numbers.range(1, 2000)]
	f := with_objects(finding("removed-api/x", "blocker"), [{"namespace": "web", "name": "a"}])
	r := result_for({f}, object.union(base_input, {"ignore": rules}))
	r.blockers == 1
}

test_object_selector_takes_only_matching_objects if {
	f := with_objects(finding("removed-api/x", "blocker"), [
		{"namespace": "web", "name": "a", "file": "apps/web.yaml"},
		{"namespace": "db", "name": "b", "file": "apps/db.yaml"},
	])
	inp := object.union(base_input, {"ignore": [{"key": "removed-api/x", "namespace": "web", "reason": "r"}]})
	r := result_for({f}, inp)
	r.blockers == 1
	r.findings[0].objects == [{"namespace": "db", "name": "b", "file": "apps/db.yaml"}]
	r.findings[0].suppressedObjects == 1
}

test_object_selectors_taking_every_object_suppress_the_finding if {
	f := with_objects(finding("removed-api/x", "blocker"), [
		{"namespace": "web", "name": "a", "file": "apps/web/a.yaml"},
		{"namespace": "web", "name": "b", "file": "apps/web/b.yaml"},
	])
	inp := object.union(base_input, {"ignore": [{"category": "removed-api", "file": "apps/**", "reason": "r"}]})
	r := result_for({f}, inp)
	r.verdict == "ready"
	r.suppressedCount == 1
}

test_omitted_objects_keep_the_finding_scored if {
	f := object.union(
		with_objects(finding("removed-api/x", "blocker"), [{"namespace": "web", "name": "a"}]),
		{"objectsOmitted": 3},
	)
	inp := object.union(base_input, {"ignore": [{"key": "removed-api/x", "namespace": "web", "reason": "r"}]})
	r := result_for({f}, inp)
	r.blockers == 1
	r.findings[0].objects == []
}

test_namespace_rule_takes_an_objectless_finding_only_when_every_namespace_matches if {
	f := object.union(finding("eol-addon/x", "blocker"), {"namespaces": ["web", "db"]})
	partial := object.union(base_input, {"ignore": [{"key": "eol-addon/x", "namespace": "web", "reason": "r"}]})
	result_for({f}, partial).blockers == 1
	whole := object.union(base_input, {"ignore": [{"key": "eol-addon/x", "namespace": "*", "reason": "r"}]})
	result_for({f}, whole).blockers == 0
}

test_custom_pack_findings_are_gathered_and_tagged if {
	r := report_of({}, {"acme": {"findings": {finding("acme-naming/x", "warning")}}}, base_input).targets[0]
	r.warnings == 1
	r.findings[0].pack == "custom/acme"
}

test_findings_that_break_the_contract_are_listed_not_scored if {
	bad := {
		object.union(finding("custom-x/a", "fatal"), {}),
		object.remove(finding("custom-x/b", "warning"), ["title"]),
		object.union(finding("custom-x/c", "warning"), {"target": "9.99"}),
		object.union(finding("custom-x/d", "warning"), {"category": "other"}),
	}
	out := report_of({}, {"test": {"findings": bad}}, base_input)
	count(out.invalidFindings) == 4
	out.targets[0].findings == []
}

test_findings_that_are_not_objects_are_listed_with_their_pack if {
	out := report_of({}, {"acme": {"findings": {"a string", 7}}}, base_input)
	count(out.invalidFindings) == 2
	every e in out.invalidFindings {
		e.pack == "custom/acme"
		e.problems == ["a finding must be an object"]
	}
}

test_findings_that_are_not_a_set_are_listed_with_their_pack if {
	out := report_of({}, {"acme": {"findings": "a string"}, "sub": {"deep": {"findings": {"k": "v"}}}}, base_input)
	{e.pack | some e in out.invalidFindings} == {"custom/acme", "custom/sub/deep"}
	every e in out.invalidFindings {
		e.problems == ["findings must be a set of objects"]
	}
}

test_a_subpackage_finding_is_gathered_and_checked if {
	good := finding("acme-naming/x", "blocker")
	r := report_of({}, {"acme": {"sub": {"findings": {good}}}}, base_input).targets[0]
	r.blockers == 1
	r.findings[0].pack == "custom/acme/sub"
	bad := object.union(good, {"namespaces": 3})
	out := report_of({}, {"acme": {"sub": {"findings": {bad}}}}, base_input)
	out.invalidFindings == [{"pack": "custom/acme/sub", "problems": ["namespaces must be an array of strings"], "finding": bad}]
}

caller := {"userAgent": "reporter/1.0", "user": "alice", "verb": "list", "count": 3, "firstSeen": "2026-11-01T08:00:00Z", "lastSeen": "2026-11-02T08:00:00Z"}

bad_callers := "callers must be an array of callers (userAgent, user, verb, count, firstSeen, lastSeen)"

test_each_field_type_is_checked if {
	f := finding("acme-x/a", "warning")
	callers := {"callers": [object.union(caller, {"sourceRanges": ["10.0.1.0/24"]})], "callersOmitted": {"callers": 2, "calls": 9}}
	report.finding_problems(object.union(f, callers)) == [] with input as base_input
	report.finding_problems(object.union(f, {"objects": [{"name": "a", "namespace": "web", "line": 3}], "objectsOmitted": 2})) == [] with input as base_input
	report.finding_problems(object.remove(f, ["title"])) == ["title is required"] with input as base_input
	cases := [
		[{"title": 1}, "title must be a string"],
		[{"detail": ["x"]}, "detail must be a string"],
		[{"namespaces": ["a", 1]}, "namespaces must be an array of strings"],
		[{"citations": "x"}, "citations must be an array of strings"],
		[{"objectsOmitted": 1.5}, "objectsOmitted must be an integer"],
		[{"objects": [{"name": 1}]}, "objects must be an array of objects with a string name"],
		[{"objects": [{"name": "a", "line": "3"}]}, "objects must be an array of objects with a string name"],
		[{"suppression": {}}, "suppression must be absent (the report sets it)"],
		[{"callers": [object.remove(caller, ["count"])]}, bad_callers],
		[{"callers": [object.union(caller, {"sourceRanges": "10.0.0.0/24"})]}, bad_callers],
		[{"callersOmitted": {"callers": 1}}, "callersOmitted must be an object with integer callers and calls"],
	]
	every c in cases {
		report.finding_problems(object.union(f, c[0])) == [c[1]] with input as base_input
	}
}

annotated_input(o) := with_inventory({
	"capabilities": {"api-usage": {"available": true}},
	"apiUsage": [{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"web": 1}, "objects": [o]}],
})

test_an_object_annotation_with_a_reason_suppresses_its_object if {
	ignored := {"namespace": "web", "name": "a", "ignore": {"rules": "deprecated-api, removed-api", "reason": "migrating in Q1"}}
	f := with_objects(finding("removed-api/x", "blocker"), [ignored])
	r := result_for({f}, annotated_input(ignored))
	r.blockers == 0
	r.suppressed[0].suppression == {"source": "annotation", "index": -1, "reason": "migrating in Q1", "expires": ""}
}

test_an_annotation_for_another_category_takes_nothing if {
	ignored := {"namespace": "web", "name": "a", "ignore": {"rules": "deprecated-api", "reason": "r"}}
	f := with_objects(finding("removed-api/x", "blocker"), [ignored])
	result_for({f}, annotated_input(ignored)).blockers == 1
}

test_a_plan_names_the_hop_where_each_finding_first_appears if {
	fs := {
		object.union(finding("removed-api/x", "warning"), {"target": "1.36"}),
		object.union(finding("removed-api/x", "blocker"), {"target": "1.37"}),
		object.union(finding("deprecated-api/y", "info"), {"target": "1.37"}),
	}
	inp := object.union(base_input, {"targets": ["1.36", "1.37"], "plan": true, "planFrom": "1.35"})
	out := report_of({"test": {"findings": fs}}, {}, inp)
	out.plan == [
		{"from": "1.35", "to": "1.36", "verdict": "ready", "score": 95, "new": ["removed-api/x"], "changed": [], "resolved": []},
		{"from": "1.36", "to": "1.37", "verdict": "blocked", "score": 75, "new": ["deprecated-api/y"], "changed": ["removed-api/x"], "resolved": []},
	]
}

test_a_plan_names_the_hop_that_resolves_a_finding if {
	fs := {
		object.union(finding("support-lifecycle/x", "warning"), {"target": "1.36"}),
		object.union(finding("removed-api/y", "blocker"), {"target": "1.37"}),
	}
	inp := object.union(base_input, {"targets": ["1.36", "1.37"], "plan": true, "planFrom": "1.35"})
	out := report.result with data.upgradescope.rules as {"test": {"findings": fs}}
		with data.upgradescope.kb.meta as meta
		with input as inp
	out.plan[1].resolved == ["support-lifecycle/x"]
	out.plan[1].new == ["removed-api/y"]
}
