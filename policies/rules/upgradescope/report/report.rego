# METADATA
# title: The report
# description: |
#   Gathers the findings of every built-in and custom pack, applies suppressions, and
#   computes per target the verdict, the score and what could not be assessed. The engine's
#   one query is data.upgradescope.report.result.
# related_resources:
#   - ref: https://www.openpolicyagent.org/docs/policy-language
package upgradescope.report

import data.upgradescope.kb
import data.upgradescope.lib.versions

# METADATA
# description: The engine's single query.
# entrypoint: true
result := object.union(
	{
		"targets": target_results,
		"expiredIgnores": expired_ignores,
		"invalidFindings": invalid_findings,
		"kb": kb.meta,
	},
	plan,
)

target_results := [target_result(t) | some t in input.targets]

severity_rank := {"blocker": 0, "warning": 1, "info": 2}

# Capabilities without which no verdict can be ready: what objects use, for a live cluster its
# versions and add-ons, and the rehearsal an inventory holds (what it did not replay is unjudged).
required_capabilities contains "api-usage"

required_capabilities contains "rehearsal" if input.inventory.rehearsal

required_capabilities contains "versions" if input.inventory.source == "cluster"

required_capabilities contains "addons" if input.inventory.source == "cluster"

# What stalls an upgrade live (drains, webhooks, aggregated APIs, nodes, component flags) is
# required from a cluster: an inventory that could not read it, or an older agent's, is not
# ready. kubelet-config never is (the chart grants no nodes/proxy by default); in files mode these are optional gaps.
required_capabilities contains name if {
	input.inventory.source == "cluster"
	some name in live_preflight_capabilities
}

live_preflight_capabilities := {
	"disruption-budgets",
	"pods",
	"admission-webhooks",
	"service-endpoints",
	"api-services",
	"node-state",
	"component-flags",
}

# Arrays, not sets: each pack's findings are a set already, and hashing every finding again
# is most of the report's cost on a large cluster. Each pack's findings rule is referenced by
# path, so only what findings need is evaluated, not every helper rule of the package (which
# `some pack in data.upgradescope.rules` would evaluate to build each package's document).
builtin_findings := [f |
	some pack
	some f in data.upgradescope.rules[pack].findings # regal ignore:mixed-iteration
]

# METADATA
# description: |
#   Each custom package's findings with the pack that made them: upgradescope.custom.<name>
#   and the packages one level below it. The engine refuses packages nested deeper when it
#   loads a pack, so none is left out here.
custom_docs := array.concat(
	[{"pack": sprintf("custom/%s", [name]), "findings": fs} |
		some name
		fs := data.upgradescope.custom[name].findings # regal ignore:mixed-iteration
	],
	[{"pack": sprintf("custom/%s/%s", [name, sub]), "findings": subpack.findings} |
		some name, pack in data.upgradescope.custom
		some sub, subpack in pack
		is_object(subpack)
		"findings" in object.keys(subpack)
	],
)

custom_entries := [{"pack": d.pack, "finding": f} |
	some d in custom_docs
	is_collection(d.findings)
	some f in d.findings
]

custom_findings := [object.union(e.finding, {"pack": e.pack}) | some e in custom_entries; valid(e.finding)]

# METADATA
# description: |
#   What breaks the findings contract, with the pack and the broken rules: a findings
#   document that is not a set, and each custom finding that is not valid. Any of them fails
#   the evaluation.
invalid_findings := array.concat(
	[{"pack": d.pack, "problems": ["findings must be a set of objects"], "finding": d.findings} |
		some d in custom_docs
		not is_collection(d.findings)
	],
	[{"pack": e.pack, "problems": problems, "finding": e.finding} |
		some e in custom_entries
		problems := finding_problems(e.finding)
		count(problems) > 0
	],
)

# Built-in packs keep the contract by construction (their tests and the report schema check
# it), so only custom findings are checked, as they are gathered.
all_findings := array.concat(builtin_findings, custom_findings)

target_result(t) := {
	"target": t,
	"verdict": verdict(counts, gaps),
	"score": score(counts),
	"blockers": counts.blocker,
	"warnings": counts.warning,
	"infos": counts.info,
	"suppressedCount": count(suppressed),
	"findings": sorted(kept),
	"suppressed": sorted(suppressed),
	"notAssessed": gaps,
} if {
	[kept, suppressed] := split_suppressed([f | some f in all_findings; f.target == t])
	counts := severity_counts(kept)
	gaps := not_assessed(t)
}

# Without ignore rules or annotated objects nothing can be suppressed: the findings are kept
# as they are, with no per-finding work.
split_suppressed(fs) := [fs, []] if {
	count(active_ignores) == 0
	not annotated_objects
} else := [
	[j.finding | some j in judged; not j.suppressed],
	[object.union(j.finding, {"suppression": j.suppressed}) | some j in judged; j.suppressed],
] if {
	judged := [judge(f) | some f in fs]
}

annotated_objects if {
	not none_annotated
	some u in input.inventory.apiUsage
	some o in object.get(u, "objects", [])
	o.ignore
}

annotated_objects if {
	not none_annotated
	some p in input.facts.probes
	some o in object.get(p, "objects", [])
	o.ignore
}

annotated_objects if {
	not none_annotated
	some c in input.inventory.crds
	some u in object.get(c, "usage", [])
	some o in object.get(u, "objects", [])
	o.ignore
}

# The engine says when no object carries a suppression annotation, sparing the walks above
# over every object of a large cluster; without the fact they run.
none_annotated if input.facts.annotatedObjects == false

severity_counts(fs) := {s: count([f | some f in fs; f.severity == s]) | some s, _ in severity_rank}

verdict(counts, _) := "blocked" if counts.blocker > 0

verdict(counts, gaps) := "unknown" if {
	counts.blocker == 0
	some g in gaps
	g.required
}

verdict(counts, gaps) := "ready" if {
	counts.blocker == 0
	every g in gaps {
		not g.required
	}
}

# METADATA
# description: The public score formula; info never counts.
score(counts) := max({0, (100 - min({75, 25 * counts.blocker})) - min({20, 5 * counts.warning})})

sorted(fs) := [x[3] | some x in sort([[severity_rank[f.severity], f.category, f.key, f] | some f in fs])]

not_assessed(t) := sort_gaps(((capability_gaps | probe_gaps) | coverage_gaps(t)))

sort_gaps(gaps) := [x[1] | some x in sort([[g.capability, g] | some g in gaps])]

capability_gaps contains gap(name, required, object.get(cap, "reason", "not available")) if {
	some name, cap in input.inventory.capabilities
	not cap.available
	required := name in required_capabilities
}

# A partial optional capability (helm skipping charts Argo CD rendered) is shown as not
# assessed too, so a check that could not run never reads as clean; only required ones make
# the verdict unknown.
capability_gaps contains object.union(gap(name, required, reason), partial) if {
	some name, cap in input.inventory.capabilities
	required := name in required_capabilities
	cap.available
	cap.partial
	reason := object.get(cap, "reason", "partial")
	partial := {"partial": true, "skipped": object.get(cap, "skipped", [])}
}

capability_gaps contains gap(name, true, "not collected") if {
	some name in required_capabilities
	not input.inventory.capabilities[name]
}

# METADATA
# description: |
#   A probe a loaded bundle declares that the inventory did not observe as declared (not
#   collected, collected for another declaration, or not available to the collector) is a
#   required gap: a rule reading it would take missing data for a clean cluster.
probe_gaps contains gap(sprintf("probes/%s", [id]), true, reason) if {
	some id, reason in input.facts.probeGaps
}

coverage_gaps(t) := {gap("kb-coverage", true, reason) |
	versions.ordinal(t) > versions.ordinal(kb.meta.horizon)
	reason := sprintf("target %s is past the knowledge base horizon %s", [t, kb.meta.horizon])
}

gap(name, required, reason) := {"capability": name, "required": required == true, "reason": reason}

# Suppressions -----------------------------------------------------------------------------

today := substring(input.now, 0, 10)

expired(rule) if rule.expires < today

expired_ignores := [object.union(rule, {"index": i}) | some i, rule in object.get(input, "ignore", []); expired(rule)]

active_ignores := [[i, rule] | some i, rule in object.get(input, "ignore", []); not expired(rule)]

selectors := {"namespace", "name", "file"}

has_selector(rule) if {
	some s in selectors
	rule[s]
}

aims_at(rule, f) if rule.key == f.key

aims_at(rule, f) if rule.category == f.category

# A rule without selectors takes the whole finding; a namespace-only rule takes an object-less
# finding when it names every namespace of it.
takes_whole(rule, f) if {
	aims_at(rule, f)
	not has_selector(rule)
}

takes_whole(rule, f) if {
	aims_at(rule, f)
	count(object.get(f, "objects", [])) == 0
	object.keys(object.filter(rule, selectors)) == {"namespace"}
	count(f.namespaces) > 0
	every ns in f.namespaces {
		glob.match(rule.namespace, ["/"], ns)
	}
}

# A rule with selectors takes an object every one of them matches.
takes_object(rule, o) if {
	patterns := selector_patterns(rule)
	patterns != []
	every p in patterns {
		glob.match(p[1], ["/"], object.get(o, p[0], ""))
	}
}

# Asked once per rule, not per rule and object.
selector_patterns(rule) := [[s, rule[s]] | some s in selectors; rule[s]]

# METADATA
# description: |
#   The active rules by the key and by the category they aim at, each list in file order. A
#   finding looks up the rules aimed at it, not every rule: a walk over every rule for every
#   object of every finding took minutes at a suppression file of thousands of rules. Grouped
#   by sorting, as a walk over every rule for every key would be quadratic too.
ignores_by_key := grouped_ignores("key")

ignores_by_category := grouped_ignores("category")

grouped_ignores(field) := {aim: [p[1] | some p in array.slice(sorted, first, ends[k])] |
	sorted := sort([[rule[field], i] | some [i, rule] in active_ignores; rule[field]])
	starts := array.concat([0], [j | some j, p in sorted; j > 0; sorted[j - 1][0] != p[0]])
	ends := array.concat(array.slice(starts, 1, count(starts)), [count(sorted)])
	some k, first in starts
	aim := sorted[first][0]
}

# The active rules aimed at f, in file order.
aimed_at(f) := [[i, input.ignore[i]] | some i in sort(by_key | by_category)] if {
	by_key := {i | some i in object.get(ignores_by_key, f.key, [])}
	by_category := {i | some i in object.get(ignores_by_category, f.category, [])}
}

suppression(i, rule) := {"source": "config", "index": i, "reason": rule.reason, "expires": object.get(rule, "expires", "")}

# An object's own annotation takes it from findings of the categories or keys it lists.
annotation_takes(f, o) if {
	trim_space(o.ignore.reason) != ""
	some listed in split(o.ignore.rules, ",")
	trim_space(listed) in {f.category, f.key}
}

judge(f) := {"finding": f, "suppressed": false} if {
	not may_be_suppressed(f)
} else := {"finding": f, "suppressed": suppression(i, rule)} if {
	[i, rule] := first_whole(f)
} else := judge_objects(f)

# Most reports have no ignore rules and no annotated objects: skip the per-object work.
may_be_suppressed(_) if count(active_ignores) > 0

may_be_suppressed(f) if {
	some o in object.get(f, "objects", [])
	o.ignore
}

first_whole(f) := matches[0] if {
	matches := [[i, rule] | some [i, rule] in aimed_at(f); takes_whole(rule, f)]
	count(matches) > 0
}

judge_objects(f) := {"finding": f, "suppressed": false} if {
	objects := object.get(f, "objects", [])
	not any_object_taken(f, objects)
}

judge_objects(f) := result if {
	objects := object.get(f, "objects", [])
	taken := [o | some o in objects; object_taker(f, o)]
	count(taken) > 0
	remaining := [o | some o in objects; not object_taker(f, o)]
	result := split_objects(f, remaining, taken)
}

any_object_taken(f, objects) if {
	some o in objects
	object_taker(f, o)
}

object_taker(f, o) := suppression(takers[0][0], takers[0][1]) if {
	takers := [[i, rule] | some [i, rule] in aimed_at(f); takes_object(rule, o)]
	count(takers) > 0
} else := {"source": "annotation", "index": -1, "reason": o.ignore.reason, "expires": ""} if {
	annotation_takes(f, o)
}

# Every listed object taken and none unlisted: the finding leaves the scored list.
split_objects(f, [], taken) := {"finding": f, "suppressed": object_taker(f, taken[0])} if {
	object.get(f, "objectsOmitted", 0) == 0
}

split_objects(f, remaining, taken) := {"finding": kept, "suppressed": false} if {
	not all_taken(f, remaining)
	kept := object.union(f, {"objects": remaining, "suppressedObjects": count(taken)})
}

all_taken(f, []) if object.get(f, "objectsOmitted", 0) == 0

# Upgrade plan ------------------------------------------------------------------------------

# METADATA
# description: |
#   With input.plan the targets are consecutive minors after input.planFrom; each hop says
#   which findings first appear there, which change severity and which the previous hop
#   had and this one no longer has.
# scope: document
default plan := {}

plan := {"plan": [hop(i) | some i, _ in input.targets]} if input.plan

hop(i) := {
	"from": hop_from(i),
	"to": tr.target,
	"verdict": tr.verdict,
	"score": tr.score,
	"new": sort([f.key | some f in tr.findings; not f.key in previous_keys(i)]),
	"changed": sort([f.key | some f in tr.findings; some p in previous_findings(i); p.key == f.key; p.severity != f.severity]),
	"resolved": sort([p.key | some p in previous_findings(i); not p.key in {f.key | some f in tr.findings}]),
} if {
	tr := target_results[i]
}

hop_from(0) := input.planFrom

hop_from(i) := input.targets[i - 1] if i > 0

previous_findings(0) := []

previous_findings(i) := target_results[i - 1].findings if i > 0

previous_keys(i) := {p.key | some p in previous_findings(i)}
