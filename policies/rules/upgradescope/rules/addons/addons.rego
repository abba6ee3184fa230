# METADATA
# title: Add-on end of life and compatibility
# description: |
#   Judges every detected add-on against the cited registry: retired or past its end of life
#   is a blocker whatever the target, ending within 90 days a warning; an installed release
#   line that ended is a blocker, one whose Kubernetes range excludes the target a blocker;
#   an add-on whose version cannot be placed is info. Dates compare at 00:00 UTC.
# related_resources:
#   - ref: https://endoflife.date
# custom:
#   category: eol-addon, eol-approaching, chart-incompat, addon-no-data
package upgradescope.rules.addons

import data.upgradescope.kb
import data.upgradescope.lib.images
import data.upgradescope.lib.versions

today := substring(input.now, 0, 10)

horizon_day := time.format([time.add_date(time.parse_rfc3339_ns(input.now), 0, 0, kb.skew.approachingDays), "UTC", "2006-01-02"])

ended(date) if {
	is_date(date)
	date <= today
}

approaching(date) if {
	is_date(date)
	date > today
	date <= horizon_day
}

is_date(date) if regex.match(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, date)

# METADATA
# description: One finding per add-on (or release line), rule and target.
# scope: document

# METADATA
# custom:
#   families:
#     - id: addon-end-of-life
#       title: Add-ons past or near their end of life
#       category: eol-addon
#       reads: [inventory.workloadImages, inventory.helmReleases, inventory.gitopsCharts, inventory.ingressClasses, inventory.nodes]
#       capabilities: [addons, versions]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the add-on is retired or past its end of life, when its installed release line has
#         ended, or when it is older than the oldest tracked line and that line has ended; warning
#         (eol-approaching) when the add-on or its line ends within 90 days. Judged on the scan's clock,
#         whatever the target; node container runtimes come from the nodes, live only.
#       citations:
#         - https://endoflife.date
#         - https://kubernetes.io/blog/2025/11/11/ingress-nginx-retirement/
findings contains f if {
	some id in detected
	entry := kb.addons[id]
	some t in input.targets
	some f in product_findings(id, entry, t)
}

# METADATA
# custom:
#   families: [{id: addon-end-of-life}, {id: addon-target-incompatible}]
findings contains f if {
	some id in detected
	entry := kb.addons[id]
	some line in {images.line(i.version) | some i in installs_of(id); i.version != ""}
	row := line_rows[id][line]
	covered := [i | some i in installs_of(id); i.version != ""; images.line(i.version) == line]
	some t in input.targets
	some f in line_findings(id, entry, row, t, covered)
}

# METADATA
# custom:
#   notice:
#     category: addon-no-data
#     why: >-
#       An add-on, release line or node container runtime the registry cannot place is reported as
#       info so that no finding never reads as supported: a limit of the knowledge base, not a risk of
#       the upgrade.
findings contains f if {
	some id in detected
	entry := kb.addons[id]
	covered := [i | some i in installs_of(id); no_data(entry, i.version)]
	count(covered) > 0
	some t in input.targets
	title := sprintf("%s: no lifecycle data for %s", [entry.name, listed(sort({version_label(i.version) | some i in covered}), ", ")])
	f := finding(id, "", "addon-no-data", "info", t, title, entry.support.citations, covered)
}

# METADATA
# custom:
#   families: [{id: addon-end-of-life}]
findings contains f if {
	some id in detected
	entry := kb.addons[id]
	oldest := oldest_line(entry)
	line_over(oldest)
	covered := [i | some i in installs_of(id); i.version != ""; versions.ordinal(images.line(i.version)) < versions.ordinal(oldest.line)]
	count(covered) > 0
	some t in input.targets
	title := sprintf("%s %s is older than the oldest tracked release line %s, which has ended", [
		entry.name, listed(sort({i.version | some i in covered}), ", "), oldest.line,
	])
	f := finding(id, sprintf("below-%s", [oldest.line]), "eol-addon", "blocker", t, title, oldest.citations, covered)
}

# METADATA
# custom:
#   families:
#     - id: addon-target-incompatible
#       title: Add-on versions that do not support the target
#       category: chart-incompat
#       reads: [inventory.workloadImages, inventory.helmReleases, inventory.gitopsCharts, inventory.ingressClasses, inventory.nodes]
#       capabilities: [addons, versions]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the Kubernetes range the registry cites for the installed version, or for its
#         release line, excludes the target.
#       citations:
#         - https://github.com/kubernetes-sigs/metrics-server#compatibility-matrix
#         - https://github.com/kubernetes/kube-state-metrics#compatibility-matrix
findings contains f if {
	some id in detected
	entry := kb.addons[id]
	some row in object.get(entry, "compat", [])
	covered := [i | some i in installs_of(id); i.version != ""; in_interval(i.version, row.versions)]
	count(covered) > 0
	some t in input.targets
	not k8s_admits(row.kubernetes, t)
	title := sprintf("%s %s does not support Kubernetes %s (supported: %s)", [
		entry.name, listed(sort({i.version | some i in covered}), ", "), t, range_label(row.kubernetes),
	])
	f := finding(id, "", "chart-incompat", "blocker", t, title, row.citations, covered)
}

# A node container runtime no registry entry lists (cri-o, docker) cannot be judged: one
# info per runtime names its versions and nodes, so "no finding" never reads as "supported".
# METADATA
# custom:
#   notice:
#     category: addon-no-data
#     why: >-
#       An add-on, release line or node container runtime the registry cannot place is reported as
#       info so that no finding never reads as supported: a limit of the knowledge base, not a risk of
#       the upgrade.
findings contains f if {
	some name, groups in unjudged_runtimes
	some t in input.targets
	f := {
		"key": sprintf("addon-no-data/%s", [name]),
		"category": "addon-no-data",
		"severity": "info",
		"target": t,
		"title": sprintf("Container runtime %s: no lifecycle data (%s)", [name, listed(sort({g.containerRuntime | some g in groups}), ", ")]),
		"detail": sprintf("%d node(s) run it: %s.", [node_count(groups), listed_of(sort({n | some g in groups; some n in g.names}), node_count(groups), ", ")]),
		"remediation": "Check the runtime's support lifecycle with its vendor before upgrading the nodes.",
		"objects": [],
		"namespaces": [],
		"citations": ["https://kubernetes.io/docs/setup/production-environment/container-runtimes/"],
	}
}

# Release lines by add-on and line, computed once per query.
line_rows := {id: {row.line: row | some row in entry.lines} | # regal ignore:prefer-set-or-object-rule
	some id, entry in kb.addons
	entry.lines
}

detected contains id if some [id, _], _ in installs

installs_of(id) := installs_by_id[id]

installs_by_id := {id: [i | some [iid, _], i in installs; iid == id] | some id in detected} # regal ignore:prefer-set-or-object-rule

# Product-level status and dates.
product_findings(id, entry, t) := {finding(id, "", "eol-addon", "blocker", t, retired_title(entry), entry.support.citations, installs_of(id))} if {
	entry.support.status == "retired"
	not is_date(entry.support.eol)
} else := {finding(id, "", "eol-addon", "blocker", t, title, entry.support.citations, installs_of(id))} if {
	ended(entry.support.eol)
	title := sprintf("%s is end-of-life since %s%s", [entry.name, entry.support.eol, extended_note(entry.support)])
} else := {finding(id, "", "eol-approaching", "warning", t, title, entry.support.citations, installs_of(id))} if {
	is_date(entry.support.eol)
	entry.support.eol > today
	needs_warning(entry)
	title := sprintf("%s reaches end of life on %s", [entry.name, entry.support.eol])
} else := set()

needs_warning(entry) if entry.support.status == "retired"

needs_warning(entry) if approaching(entry.support.eol)

retired_title(entry) := sprintf("%s is retired", [entry.name])

extended_note(support) := sprintf(" (extended support until %s if %s)", [support.extendedEol, support.extendedCondition]) if {
	support.extendedEol > today
} else := ""

line_findings(id, entry, row, t, covered) := line_eol(id, entry, row, t, covered) | {f |
	not k8s_admits(object.get(row, "kubernetes", {}), t)
	title := sprintf("%s %s does not support Kubernetes %s (supported: %s)", [entry.name, row.line, t, range_label(row.kubernetes)])
	f := finding(id, row.line, "chart-incompat", "blocker", t, title, row.citations, covered)
}

line_eol(id, entry, row, t, covered) := {finding(id, row.line, "eol-addon", "blocker", t, title, row.citations, covered)} if {
	line_over(row)
	title := sprintf("%s %s release line reached end of life%s", [entry.name, row.line, since(row.eol)])
} else := {finding(id, row.line, "eol-approaching", "warning", t, title, row.citations, covered)} if {
	approaching(row.eol)
	title := sprintf("%s %s release line reaches end of life on %s", [entry.name, row.line, row.eol])
} else := set()

line_over(row) if row.eol == "ended"

line_over(row) if ended(row.eol)

since(date) := sprintf(" on %s", [date]) if is_date(date)

else := ""

oldest_line(entry) := oldest_lines[entry.id]

# The oldest tracked line of each add-on, computed once per query.
oldest_lines := {id: sorted[0][1] | # regal ignore:prefer-set-or-object-rule
	some id, entry in kb.addons
	count(object.get(entry, "lines", [])) > 0
	sorted := sort([[versions.ordinal(row.line), row] | some row in entry.lines])
}

unjudged_runtimes[name] := groups if {
	some g in object.get(input.inventory, "nodes", [])
	name := runtime_name(g)
	not kb.addonindex.runtimes[name]
	groups := [h | some h in input.inventory.nodes; runtime_name(h) == name]
}

runtime_name(g) := name if {
	parts := split(object.get(g, "containerRuntime", ""), "://")
	count(parts) == 2
	name := parts[0]
	name != ""
}

# An install can't be placed: no version where the registry tracks versions, a line it does
# not list, or a line whose end of life no citation gives.
no_data(entry, "") if tracks_versions(entry)

no_data(entry, version) if {
	version != ""
	line := images.line(version)
	not line_rows[entry.id][line]
	versions.ordinal(line) >= versions.ordinal(oldest_line(entry).line)
}

no_data(entry, version) if {
	version != ""
	line_rows[entry.id][images.line(version)].eol == "unknown"
}

tracks_versions(entry) if count(object.get(entry, "lines", [])) > 0

tracks_versions(entry) if count(object.get(entry, "compat", [])) > 0

in_interval(version, interval) if {
	semver.compare(version, interval.from) >= 0
	below(version, object.get(interval, "before", ""))
}

below(_, "")

below(version, before) if {
	before != ""
	semver.compare(version, before) < 0
}

k8s_admits(r, t) if {
	at_least(object.get(r, "min", ""), t)
	at_most(object.get(r, "max", ""), t)
}

at_least("", _)

at_least(minimum, t) if versions.ordinal(t) >= versions.ordinal(minimum)

at_most("", _)

at_most(maximum, t) if versions.ordinal(t) <= versions.ordinal(maximum)

range_label(r) := sprintf("%s to %s", [object.get(r, "min", "any"), object.get(r, "max", "any")])

version_label("") := "an unknown version"

version_label(v) := sprintf("version %s", [v]) if v != ""

# METADATA
# description: |
#   A finding about add-on id, naming every install it covers and up to max_objects
#   workloads running them; the rest are counted in objectsOmitted.
finding(id, discriminator, category, severity, t, title, citations, covered) := {
	"key": concat("/", [p | some p in [category, id, discriminator]; p != ""]),
	"category": category,
	"severity": severity,
	"target": t,
	"title": title,
	"detail": detail(id, covered),
	"remediation": remediation(id),
	"objects": objects,
	"objectsOmitted": (count(named) - count(objects)) + sum([i.objectsOmitted | some i in covered]),
	"namespaces": sort({ns | some i in covered; some ns in i.namespaces; ns != ""}),
	"citations": citations,
} if {
	named := sort({o | some i in covered; some o in i.objects})
	objects := array.slice(named, 0, max_objects)
}

# A finding names up to this many workloads, as an apiUsage entry lists objects.
max_objects := 100

detail(id, covered) := sprintf("Detected %s %s on nodes (evidence: %s)", [
	kb.addons[id].name,
	listed(sort({version_text(i.version) | some i in covered}), ", "),
	listed(sort({e | some i in covered; some e in i.evidence}), "; "),
]) if {
	{s | some i in covered; some s in i.sources} == {"node"}
} else := sprintf("Detected %s %s via %s in namespace(s): %s (evidence: %s)", [
	kb.addons[id].name,
	listed(sort({version_text(i.version) | some i in covered}), ", "),
	concat(", ", sort({s | some i in covered; some s in i.sources})),
	namespace_text(sort({ns | some i in covered; some ns in i.namespaces})),
	listed(sort({e | some i in covered; some e in i.evidence}), "; "),
])

version_text("") := "(version unknown)"

version_text(v) := v if v != ""

node_count(groups) := sum([g.count | some g in groups])

# listed_of is listed for items that name only some of total things (an inventory names at
# most so many nodes of a group): the rest are counted, so the text adds up to total.
listed_of(items, total, separator) := listed(items, separator) if {
	count(items) >= total
} else := sprintf("%s and %d more", [concat(separator, array.slice(items, 0, max_listed)), total - min([count(items), max_listed])])

namespace_text([]) := "(none recorded)"

namespace_text(nss) := listed(nss, ", ") if count(nss) > 0

# Text names at most max_listed versions, namespaces, nodes or pieces of evidence, and counts
# the rest, as the findings' objects stop at max_objects: a cluster can run thousands of each,
# and a title that lists them all is read by no one and grows with the inventory (the engine
# refuses one builtin call that builds more than its share of memory).
listed(items, separator) := concat(separator, items) if {
	count(items) <= max_listed
} else := sprintf("%s and %d more", [concat(separator, array.slice(items, 0, max_listed)), count(items) - max_listed])

max_listed := 20

remediation(id) := recommendation if {
	recommendation := kb.addons[id].recommendation
} else := sprintf("Upgrade %s to a release line that is supported and supports the target.", [kb.addons[id].name])
