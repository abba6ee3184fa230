package upgradescope.rules.helm_test

import data.upgradescope.rules.helm

advice(source, versions) := {
	"source": source, "namespace": "argocd", "name": "shop", "chart": "shop",
	"repository": "https://charts.example.com", "installed": "1.2.3", "read": true,
	"targets": ["1.36"], "versions": versions,
}

gitops_judge(a) := fs if {
	fs := helm.findings with input as {
		"inventory": {"chartAdvice": [a]}, "targets": ["1.36"],
		"facts": {"kubeVersion": {}, "kubeVersionFlagged": [], "helmManifestApis": {}},
	}
}

blocked_by(keys) := {"version": "1.2.3", "appVersion": "2.0", "blocks": {"1.36": keys}}

test_a_declared_version_the_rules_block_is_a_blocker_naming_what_blocks_it if {
	fs := gitops_judge(advice("argocd", [blocked_by(["removed-api/helm-release/argocd/shop", "chart-incompat/helm-release/argocd/shop"])]))
	some f in fs
	f.key == "chart-incompat/argocd/argocd/shop"
	f.severity == "blocker"
	f.category == "chart-incompat"
	f.title == "Argo CD Application argocd/shop: chart shop 1.2.3 does not support 1.36"
	contains(f.detail, "at 1.36: its kubeVersion excludes the target; its manifest uses APIs the target removes.")
	startswith(f.remediation, "Raise the chart version in the Application's targetRevision")
}

test_a_flux_chart_blocked_only_by_removed_apis_is_a_removed_api_blocker if {
	fs := gitops_judge(advice("flux", [blocked_by(["removed-api/helm-release/argocd/shop", "removed-api/policy/v1beta1/PodDisruptionBudget"])]))
	{[f.key, f.category, f.severity] | some f in fs} == {["chart-incompat/flux/argocd/shop", "removed-api", "blocker"]}
	some f in fs
	endswith(f.detail, "its manifest uses APIs the target removes; removed-api/policy/v1beta1/PodDisruptionBudget.")
}

test_a_declared_version_no_rule_blocks_at_the_target_raises_nothing if {
	fine := {"version": "1.2.3", "blocks": {"1.35": ["chart-incompat/helm-release/argocd/shop"]}}
	count(gitops_judge(advice("argocd", [fine]))) == 0
}

test_a_declared_version_that_could_not_be_rendered_is_info if {
	fs := gitops_judge(advice("argocd", [{"version": "1.2.3", "error": "render: values.yaml: parse error"}]))
	some f in fs
	f.severity == "info"
	f.detail == "Chart shop 1.2.3 declared by Argo CD Application argocd/shop could not be rendered: render: values.yaml: parse error"
}

test_advice_for_a_helm_release_raises_nothing_here if {
	count(gitops_judge(advice("helm", [blocked_by(["chart-incompat/helm-release/argocd/shop"])]))) == 0
}

test_an_inventory_without_advice_raises_nothing if {
	count(helm.findings) == 0 with input as {
		"inventory": {}, "targets": ["1.36"],
		"facts": {"kubeVersion": {}, "kubeVersionFlagged": [], "helmManifestApis": {}},
	}
}
