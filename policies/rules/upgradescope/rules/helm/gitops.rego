# GitOps charts: the chart version an Argo CD Application or a Flux HelmRelease declares, as
# the chart advisor (--advise-charts) judged it. Argo CD renders a chart with helm template and
# leaves no Helm release, so without the advisor nothing reads such a chart's kubeVersion or
# APIs; the advisor rendered the declared version at the values the object declares and ran
# these rules on it at every target, and input.inventory.chartAdvice records the blocker keys
# they raised (versions[0].blocks). The engine names the version to raise the chart to
# (finding.fix) from the same advice.
package upgradescope.rules.helm

# What the finding calls the object that declares the chart, by ChartAdvice source.
gitops_objects := {"argocd": "Argo CD Application", "flux": "Flux HelmRelease"}

# How the remediation calls the field the chart version is declared in, by source.
gitops_version_fields := {"argocd": "the Application's targetRevision", "flux": "the HelmRelease's spec.chart.spec.version"}

# The advice for each GitOps chart the advisor read, with the declared version it judged.
gitops_declared contains [a, v] if {
	some a in object.get(input.inventory, "chartAdvice", [])
	gitops_objects[a.source]
	v := a.versions[0]
}

# METADATA
# custom:
#   families:
#     - id: gitops-chart-declared-version
#       title: Argo CD Applications and Flux HelmReleases whose declared chart version does not support the target
#       category: chart-incompat
#       reads: ["inventory.chartAdvice[].versions[0]"]
#       capabilities: [addons]
#       modes: [files, cluster]
#       severity: >-
#         blocker when the rules, run by the chart advisor (--advise-charts) on the declared chart version rendered at
#         the values the object declares, raise a blocker at the target (category chart-incompat when a chart-incompat
#         finding blocks it, else removed-api); info when that version could not be fetched or rendered. Nothing
#         without --advise-charts.
#       citations:
#         - https://argo-cd.readthedocs.io/en/stable/user-guide/helm/
#         - https://fluxcd.io/flux/components/helm/helmreleases/#chart-template
findings contains f if {
	some [a, v] in gitops_declared
	some t in input.targets
	keys := sort(object.get(object.get(v, "blocks", {}), t, []))
	count(keys) > 0
	f := {
		"key": sprintf("chart-incompat/%s/%s/%s", [a.source, a.namespace, a.name]),
		"category": gitops_category(keys),
		"severity": "blocker",
		"target": t,
		"title": sprintf("%s %s/%s: chart %s %s does not support %s", [
			gitops_objects[a.source], a.namespace, a.name, a.chart, a.installed, t,
		]),
		"detail": sprintf("Rendered at the values it declares, chart %s %s at %s: %s.", [
			a.chart, a.installed, t, concat("; ", sort({gitops_blocked_by(k) | some k in keys})),
		]),
		"remediation": sprintf("Raise the chart version in %s (%s/%s) to one that supports %s before upgrading the cluster.", [
			gitops_version_fields[a.source], a.namespace, a.name, t,
		]),
		"objects": [],
		"namespaces": [a.namespace],
		"citations": [chart_docs],
	}
}

# METADATA
# custom:
#   families: [{id: gitops-chart-declared-version}]
findings contains f if {
	some [a, v] in gitops_declared
	v.error
	some t in input.targets
	f := {
		"key": sprintf("chart-incompat/%s/%s/%s", [a.source, a.namespace, a.name]),
		"category": "chart-incompat",
		"severity": "info",
		"target": t,
		"title": sprintf("%s %s/%s: chart %s %s could not be judged", [
			gitops_objects[a.source], a.namespace, a.name, a.chart, a.installed,
		]),
		"detail": sprintf("Chart %s %s declared by %s %s/%s could not be rendered: %s", [
			a.chart, a.installed, gitops_objects[a.source], a.namespace, a.name, v.error,
		]),
		"remediation": concat(" ", [
			"Check that the chart version and the values the object declares render with helm template;",
			"until then its APIs and kubeVersion are not judged.",
		]),
		"objects": [],
		"namespaces": [a.namespace],
		"citations": [chart_docs],
	}
}

# What a key the advisor recorded says of the declared version, in words: the Helm rules'
# keys name the release the advisor judged the version as, which does not exist; the others
# (an API the rendered manifests use, an add-on line) read as they are.
gitops_blocked_by(k) := "its kubeVersion excludes the target" if {
	startswith(k, "chart-incompat/helm-release/")
} else := "its manifest uses APIs the target removes" if {
	startswith(k, "removed-api/helm-release/")
} else := k

# A chart-incompat finding among what blocks the version makes the chart incompatible;
# otherwise what blocks it are APIs its templates render that the target removes.
gitops_category(keys) := "chart-incompat" if {
	some k in keys
	startswith(k, "chart-incompat/")
} else := "removed-api"
