# METADATA
# title: Helm releases
# description: |
#   Judges each Helm release: its chart's kubeVersion constraint against the target (checked
#   with Helm's own semver library by the engine, passed as input.facts.kubeVersion; the
#   release and target pairs it does not admit as input.facts.kubeVersionFlagged), and the
#   APIs of its stored manifest, because `helm upgrade` fails when the last release's manifest
#   uses an API the cluster no longer serves.
# related_resources:
#   - ref: https://helm.sh/docs/topics/charts/#the-chartyaml-file
#   - ref: https://github.com/helm/helm-mapkubeapis
# custom:
#   category: chart-incompat, removed-api, deprecated-api
package upgradescope.rules.helm

import data.upgradescope.kb
import data.upgradescope.lib.apis
import data.upgradescope.lib.helm
import data.upgradescope.lib.versions

chart_docs := "https://helm.sh/docs/topics/charts/#the-chartyaml-file"

mapkubeapis := "https://github.com/helm/helm-mapkubeapis"

gone := {"uninstalled", "uninstalling"}

# METADATA
# description: kubeVersion, removed and deprecated APIs of each release's stored manifest.
# scope: document

# METADATA
# custom:
#   families:
#     - id: helm-chart-kubeversion
#       title: Helm releases whose chart's kubeVersion excludes the target
#       category: chart-incompat
#       reads: ["inventory.helmReleases[].kubeVersion", facts.kubeVersionFlagged]
#       capabilities: [helm]
#       modes: [cluster]
#       severity: >-
#         blocker when the chart's kubeVersion constraint, checked with Helm's own semver library,
#         excludes the target (Helm refuses to install or upgrade the chart there); info when the
#         constraint does not parse.
#       citations:
#         - https://helm.sh/docs/topics/charts/#the-chartyaml-file
#         - https://github.com/helm/helm/blob/v3.17.0/pkg/action/action.go#L115-L119
findings contains f if {
	some [i, t, "excludes"] in input.facts.kubeVersionFlagged
	r := helm.release(i)
	not gone[r.status]
	f := {
		"key": sprintf("chart-incompat/helm-release/%s/%s", [r.namespace, r.name]),
		"category": "chart-incompat",
		"severity": "blocker",
		"target": t,
		"title": sprintf("Helm release %s/%s: chart %s %s requires Kubernetes %s, which excludes %s", [
			r.namespace, r.name, r.chart, object.get(r, "chartVersion", ""), r.kubeVersion, t,
		]),
		"detail": plain_detail(r),
		"remediation": sprintf("Upgrade the %s chart to a version whose kubeVersion admits %s before upgrading the cluster.", [r.chart, t]),
		"objects": [],
		"namespaces": [r.namespace],
		"citations": [chart_docs],
	}
}

# METADATA
# custom:
#   families: [{id: helm-chart-kubeversion}]
findings contains f if {
	some [i, t, "invalid"] in input.facts.kubeVersionFlagged
	r := helm.release(i)
	not gone[r.status]
	f := {
		"key": sprintf("chart-incompat/helm-release/%s/%s", [r.namespace, r.name]),
		"category": "chart-incompat",
		"severity": "info",
		"target": t,
		"title": sprintf("Helm release %s/%s: chart kubeVersion %q does not parse", [r.namespace, r.name, r.kubeVersion]),
		"detail": plain_detail(r),
		"remediation": "Helm will refuse this chart too; fix its kubeVersion.",
		"objects": [],
		"namespaces": [r.namespace],
		"citations": [chart_docs],
	}
}

# METADATA
# custom:
#   families:
#     - id: helm-release-manifest-apis
#       title: Helm releases whose stored manifest uses APIs the target removes
#       category: removed-api
#       reads: ["inventory.helmReleases[].manifestApis", facts.helmManifestApis]
#       capabilities: [helm]
#       modes: [cluster]
#       severity: >-
#         blocker when an API of the last release's stored manifest is removed at or before the target
#         (helm upgrade cannot build the release's current objects to diff against); warning when one is
#         deprecated by the target and not yet removed. Objects the live scan already flags at the API are
#         not counted again.
#       citations:
#         - https://helm.sh/docs/topics/kubernetes_apis/
#         - https://github.com/helm/helm/blob/v3.17.0/pkg/action/upgrade.go#L311-L321
#         - https://github.com/helm/helm-mapkubeapis
findings contains f if {
	some [r, judged] in release_apis
	some t in input.targets
	used := [api_label(u, e, n) | some [u, e, n] in judged; apis.removed_by(e, t)]
	count(used) > 0
	f := {
		"key": sprintf("removed-api/helm-release/%s/%s", [r.namespace, r.name]),
		"category": "removed-api",
		"severity": "blocker",
		"target": t,
		"title": sprintf("Helm release %s/%s: stored manifest uses APIs removed by %s", [r.namespace, r.name, t]),
		"detail": used_detail(r, used),
		"remediation": sprintf(
			"helm upgrade will fail until the stored manifest is rewritten: run helm-mapkubeapis on release %s (namespace %s), then upgrade the chart.",
			[r.name, r.namespace],
		),
		"objects": [],
		"namespaces": [r.namespace],
		"citations": [mapkubeapis, kb.meta.citation],
	}
}

# METADATA
# custom:
#   families: [{id: helm-release-manifest-apis}]
findings contains f if {
	some [r, judged] in release_apis
	some t in input.targets
	used := [api_label(u, e, n) |
		some [u, e, n] in judged
		apis.deprecated_by(e, t)
		not apis.removed_by(e, t)
	]
	count(used) > 0
	f := {
		"key": sprintf("deprecated-api/helm-release/%s/%s", [r.namespace, r.name]),
		"category": "deprecated-api",
		"severity": "warning",
		"target": t,
		"title": sprintf("Helm release %s/%s: stored manifest uses deprecated APIs", [r.namespace, r.name]),
		"detail": used_detail(r, used),
		"remediation": "Upgrade the chart to a version that uses current APIs; helm-mapkubeapis rewrites a stored manifest once an API is gone.",
		"objects": [],
		"namespaces": [r.namespace],
		"citations": [mapkubeapis, kb.meta.citation],
	}
}

# Each release whose stored manifest uses an API the knowledge base deprecates or removes, with
# those APIs as [usage, entry, objects not already flagged by the live scan], computed once
# per query. One object is never counted twice. Only the releases the engine lists
# (input.facts.helmManifestApis) under an API the knowledge base flags are walked.
release_apis := [[r, judged] | # regal ignore:prefer-set-or-object-rule
	some i in flagged_releases
	r := helm.release(i)
	not gone[r.status]
	judged := [[u, e, n] |
		some u in object.get(r, "manifestApis", [])
		k := concat("/", [object.get(core_group, u.group, u.group), u.version, u.kind])
		flagged_apis[k]
		e := kb.apis[k]
		n := unflagged_count(k, r, u)
		n > 0
	]
	count(judged) > 0
]

# The group name kb.apis keys the core group by, as lib/apis.key spells it; inlined here,
# where every API of every flagged release's stored manifest is keyed.
core_group := {"": "core"}

# The keys of the APIs some release's stored manifest uses that the knowledge base flags.
flagged_apis contains k if {
	some k, _ in input.facts.helmManifestApis
	e := kb.apis[k]
	e.stored
	e.deprecated
}

# The indices of the releases whose stored manifest uses an API the knowledge base flags.
flagged_releases contains i if {
	some k in flagged_apis
	some i in input.facts.helmManifestApis[k]
}

# The objects of a flagged API the live scan found written through it, as [namespace, name] by
# API key; most releases' APIs have none, and skip the object walk. Only the APIs of
# flagged_apis are looked up, so the live objects of the others are not walked.
live_objects := {k: {[object.get(o, "namespace", ""), o.name] | # regal ignore:prefer-set-or-object-rule
	some o in object.get(u, "objects", [])
} |
	some u in input.inventory.apiUsage
	k := apis.key(u.group, u.version, u.kind)
	flagged_apis[k]
}

unflagged_count(k, r, u) := n if {
	live := live_objects[k]
	n := u.count - count([o | some o in object.get(u, "objects", []); flagged_live(r, o, live)])
} else := u.count

flagged_live(_, o, live) if [object.get(o, "namespace", ""), o.name] in live

# Helm installs a namespaced object stored without metadata.namespace into the release's
# namespace; a cluster-scoped one has none, which the rule above matches.
flagged_live(r, o, live) if {
	object.get(o, "namespace", "") == ""
	[r.namespace, o.name] in live
}

# n is how many of the release's objects at the API the live scan does not already flag.
api_label(u, e, n) := sprintf("%s %s (%d, removal in %s%s)", [apis.api_version(e), u.kind, n, e.removed, projected(e)]) if {
	e.removed
} else := sprintf("%s %s (%d, deprecated in %s)", [apis.api_version(e), u.kind, n, e.deprecated])

projected(e) := " (projected)" if versions.ordinal(e.removed) > versions.ordinal(kb.meta.horizon)

else := ""

# A release's detail when its finding names no API, and when it names the APIs used.
plain_detail(r) := sprintf("Release %d of chart %s %s, app version %s.", [
	object.get(r, "revision", 0), r.chart, object.get(r, "chartVersion", "?"), object.get(r, "appVersion", "?"),
])

used_detail(r, used) := sprintf("Release %d of chart %s %s uses: %s.", [
	object.get(r, "revision", 0), r.chart, object.get(r, "chartVersion", "?"), concat("; ", used),
])
