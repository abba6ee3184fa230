package upgradescope.rules.helm_test

import data.upgradescope.lib.apis
import data.upgradescope.rules.helm

release := {
	"name": "shop", "namespace": "web", "chart": "shop", "chartVersion": "1.2.0", "appVersion": "2.0.0",
	"kubeVersion": ">=1.21.0-0 <1.33.0-0", "status": "deployed", "revision": 4,
	"manifestApis": [
		{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"web": 1}},
		{"group": "", "version": "v1", "kind": "Endpoints", "count": 2, "namespaces": {"web": 2}},
		{"group": "apps", "version": "v1", "kind": "Deployment", "count": 1, "namespaces": {"web": 1}},
	],
}

judge(r, t, fact) := fs if {
	fs := helm.findings with input as {
		"inventory": {"helmReleases": [r]}, "targets": [t],
		"facts": object.union(
			{"kubeVersion": {"web/shop": {t: fact}}, "kubeVersionFlagged": [[0, t, fact] | fact != "admits"]},
			release_facts(r),
		),
	}
}

# The manifest facts the engine passes for an inventory of the one release r.
release_facts(r) := {"helmManifestApis": {apis.key(u.group, u.version, u.kind): [0] | some u in r.manifestApis}}

test_only_the_releases_the_engine_lists_under_a_flagged_api_are_walked if {
	fs := helm.findings with input as {
		"inventory": {"helmReleases": [release]}, "targets": ["1.33"],
		"facts": {"kubeVersion": {}, "kubeVersionFlagged": [], "helmManifestApis": {"apps/v1/Deployment": [0]}},
	}
	count(fs) == 0
}

test_a_flagged_kube_version_names_the_release_by_its_index if {
	other := object.union(release, {"name": "blog", "kubeVersion": ""})
	fs := helm.findings with input as {
		"inventory": {"helmReleases": [other, release]}, "targets": ["1.33"],
		"facts": {"kubeVersion": {"web/shop": {"1.33": "excludes"}}, "kubeVersionFlagged": [[1, "1.33", "excludes"]], "helmManifestApis": {}},
	}
	{f.key | some f in fs} == {"chart-incompat/helm-release/web/shop"}
}

by_key(fs) := {[f.key, f.severity] | some f in fs}

test_a_kube_version_that_excludes_the_target_is_a_blocker if {
	fs := judge(release, "1.33", "excludes")
	["chart-incompat/helm-release/web/shop", "blocker"] in by_key(fs)
}

test_a_kube_version_that_admits_the_target_is_silent if {
	fs := judge(release, "1.32", "admits")
	not ["chart-incompat/helm-release/web/shop", "blocker"] in by_key(fs)
}

test_an_unparseable_kube_version_is_info if {
	["chart-incompat/helm-release/web/shop", "info"] in by_key(judge(release, "1.32", "invalid"))
}

test_stored_manifest_apis_removed_by_the_target_block_helm_upgrade if {
	fs := judge(release, "1.32", "admits")
	some f in fs
	f.key == "removed-api/helm-release/web/shop"
	f.severity == "blocker"
	contains(f.remediation, "helm-mapkubeapis")
	contains(f.detail, "extensions/v1beta1 Ingress (1, removal in 1.22)")
}

test_deprecated_manifest_apis_are_a_warning if {
	fs := judge(release, "1.33", "admits")
	some f in fs
	f.key == "deprecated-api/helm-release/web/shop"
	f.severity == "warning"
	contains(f.detail, "v1 Endpoints (2, deprecated in 1.33)")
}

test_an_api_deprecated_after_the_target_is_not_a_warning_yet if {
	fs := judge(release, "1.32", "admits")
	not "deprecated-api/helm-release/web/shop" in {f.key | some f in fs}
}

test_uninstalled_releases_are_skipped if {
	count(judge(object.union(release, {"status": "uninstalled"}), "1.33", "excludes")) == 0
}

# The release's Ingress (stored without a namespace, so in the release's) is flagged by the
# live scan already; one of its two Endpoints is too.
with_objects := object.union(release, {"manifestApis": [
	{
		"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1, "namespaces": {"": 1},
		"objects": [{"name": "shop"}],
	},
	{
		"group": "", "version": "v1", "kind": "Endpoints", "count": 2, "namespaces": {"web": 2},
		"objects": [{"namespace": "web", "name": "db"}, {"namespace": "web", "name": "cache"}],
	},
]})

live_usage := [
	{
		"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1,
		"objects": [{"namespace": "web", "name": "shop"}],
	},
	{"group": "", "version": "v1", "kind": "Endpoints", "count": 1, "objects": [{"namespace": "web", "name": "db"}]},
]

test_objects_the_live_scan_flags_are_not_counted_again if {
	fs := helm.findings with input as {
		"inventory": {"helmReleases": [with_objects], "apiUsage": live_usage}, "targets": ["1.33"],
		"facts": object.union({"kubeVersion": {}}, release_facts(with_objects)),
	}
	not "removed-api/helm-release/web/shop" in {f.key | some f in fs}
	some f in fs
	f.key == "deprecated-api/helm-release/web/shop"
	contains(f.detail, "v1 Endpoints (1, deprecated in 1.33)")
}

test_objects_in_another_namespace_still_count if {
	elsewhere := [object.union(u, {"objects": [{"namespace": "blog", "name": "shop"}]}) | some u in live_usage]
	fs := helm.findings with input as {
		"inventory": {"helmReleases": [with_objects], "apiUsage": elsewhere}, "targets": ["1.32"],
		"facts": object.union({"kubeVersion": {}}, release_facts(with_objects)),
	}
	"removed-api/helm-release/web/shop" in {f.key | some f in fs}
}
