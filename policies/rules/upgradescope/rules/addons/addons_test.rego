package upgradescope.rules.addons_test

import data.upgradescope.rules.addons

registry := {
	"retired": {
		"id": "retired", "name": "Retired",
		"match": {"images": ["registry.k8s.io/retired/controller"], "labels": ["retired"], "ingressControllers": ["example.com/retired"]},
		"support": {"status": "retired", "eol": "2026-03-24", "citations": ["https://example.com/retired"]},
		"recommendation": "Move to Gateway API.",
	},
	"vendor": {
		"id": "vendor", "name": "Vendor build", "supersedes": ["retired"],
		"match": {"images": ["docker.io/vendor/retired:*-hardened*"]},
		"support": {"status": "supported", "eol": "2027-01-15", "citations": ["https://example.com/vendor"]},
	},
	"lined": {
		"id": "lined", "name": "Lined", "match": {"images": ["docker.io/lined/controller"], "charts": ["lined"]},
		"support": {"status": "supported", "eol": "unknown", "citations": ["https://example.com/lined"]},
		"lines": [
			{"line": "3.4", "eol": "none", "kubernetes": {"min": "1.30", "max": "1.34"}, "citations": ["https://example.com/3.4"]},
			{"line": "3.3", "eol": "2026-12-20", "citations": ["https://example.com/3.3"]},
			{"line": "3.2", "eol": "2026-05-01", "citations": ["https://example.com/3.2"]},
			{"line": "3.1", "eol": "ended", "citations": ["https://example.com/3.1"]},
			{"line": "3.0", "eol": "unknown", "citations": ["https://example.com/3.0"]},
		],
	},
	"ranged": {
		"id": "ranged", "name": "Ranged", "match": {"images": ["registry.k8s.io/ranged/ranged"]},
		"support": {"status": "supported", "eol": "unknown", "citations": ["https://example.com/ranged"]},
		"compat": [{"versions": {"from": "0.10.0", "before": "0.18.0"}, "kubernetes": {"min": "1.19", "max": "1.32"}, "citations": ["https://example.com/matrix"]}],
	},
	"quiet": {
		"id": "quiet", "name": "Quiet", "match": {"images": ["quay.io/quiet/quiet"]},
		"support": {"status": "supported", "eol": "unknown", "citations": ["https://example.com/quiet"]},
	},
}

# The index tools/genregistry would build for the registry above.
index := {
	"imagePaths": {
		"retired/controller": [{"id": "retired", "tag": ""}],
		"vendor/retired": [{"id": "vendor", "tag": "*-hardened*"}],
		"lined/controller": [{"id": "lined", "tag": ""}],
		"ranged/ranged": [{"id": "ranged", "tag": ""}],
		"quiet/quiet": [{"id": "quiet", "tag": ""}],
	},
	"firstSegments": {"retired": true, "vendor": true, "lined": true, "ranged": true, "quiet": true},
	"labels": {"retired": ["retired"]},
	"charts": {"lined": ["lined"], "retired": ["retired"]},
	"ingressControllers": {"example.com/retired": ["retired"]},
	"runtimes": {"lined": ["lined"]},
}

# image is the inventory's record of a reference seen in namespace ns:
# {repository, versions: [{tag, digest, namespaces}]}.
image(ref, ns) := {"repository": m[1], "versions": [object.union(tagged(m[2], m[3]), {"namespaces": [ns]})]} if {
	m := regex.find_all_string_submatch_n(`^(.+?)(?::([^:/@]+))?(?:@(.+))?$`, ref, 1)[0]
}

tagged(tag, digest) := {k: v | some k, v in {"tag": tag, "digest": digest}; v != ""}

# with_workload adds the workloads an image's one version runs in.
with_workload(w, objects) := json.patch(w, [{"op": "add", "path": "/versions/0/objects", "value": objects}])

# The engine hands the rules the images an add-on matcher could claim as input.facts.images;
# these tests pass every image of the inventory, and index its Helm releases by chart as the
# engine does (input.facts.helmChartIndex).
input_of(inventory, targets) := {
	"inventory": inventory, "targets": targets, "now": "2026-11-29T12:00:00Z",
	"facts": {
		"images": object.get(inventory, "workloadImages", []),
		"helmChartIndex": chart_index(object.get(inventory, "helmReleases", [])),
	},
}

chart_index(releases) := {r.chart: [i | some i, o in releases; o.chart == r.chart] | some r in releases}

judge(inventory, t) := fs if {
	fs := addons.findings with input as input_of(inventory, [t])
		with data.upgradescope.kb.addons as registry
		with data.upgradescope.kb.addonindex as index
		with data.upgradescope.kb.skew.approachingDays as 90
}

keys(fs) := {[f.key, f.severity] | some f in fs}

test_a_retired_addon_is_a_blocker_whatever_the_target if {
	fs := judge({"workloadImages": [image("registry.k8s.io/retired/controller:v1.9.4", "ingress")]}, "1.30")
	keys(fs) == {["eol-addon/retired", "blocker"]}
	some f in fs
	f.title == "Retired is end-of-life since 2026-03-24"
	f.remediation == "Move to Gateway API."
	f.namespaces == ["ingress"]
	f.citations == ["https://example.com/retired"]
}

test_a_finding_names_the_workloads_running_the_image_with_their_file_and_line if {
	a := {"namespace": "ingress", "name": "controller", "file": "edge/ingress.yaml", "line": 12}
	b := {"namespace": "ingress", "name": "canary", "file": "edge/canary.yaml", "line": 3}
	older := json.patch(with_workload(image("registry.k8s.io/retired/controller:v1.9.3", "ingress"), [a]), [
		{"op": "add", "path": "/versions/0/objectsOmitted", "value": 4},
	])
	inv := {"workloadImages": [older, with_workload(image("registry.k8s.io/retired/controller:v1.9.4", "ingress"), [b, a])]}
	some f in judge(inv, "1.30")
	f.objects == [b, a]
	f.objectsOmitted == 4
}

test_a_finding_names_at_most_a_hundred_workloads if {
	objects := [{"namespace": "x", "name": sprintf("w%03d", [i]), "file": "f.yaml", "line": i} | some i in numbers.range(1, 105)]
	some f in judge({"workloadImages": [with_workload(image("registry.k8s.io/retired/controller:v1.9.4", "x"), objects)]}, "1.30")
	count(f.objects) == 100
	f.objectsOmitted == 5
}

test_images_the_engine_did_not_pick_are_not_read if {
	inv := {"workloadImages": [image("registry.k8s.io/retired/controller:v1.9.4", "ingress")]}
	fs := addons.findings with input as object.union(input_of(inv, ["1.30"]), {"facts": {"images": []}})
		with data.upgradescope.kb.addons as registry
		with data.upgradescope.kb.addonindex as index
	count(fs) == 0
}

test_a_mirror_matches_by_path_and_digests_do_not_matter if {
	fs := judge({"workloadImages": [image("harbor.corp/mirror/retired/controller@sha256:0a1b", "edge")]}, "1.30")
	keys(fs) == {["eol-addon/retired", "blocker"]}
}

test_a_rebuilt_image_is_found_by_its_labels if {
	w := {"repository": "corp/rebuilt", "versions": [{"tag": "1.0", "namespaces": ["edge"], "labelSets": [{"app.kubernetes.io/name": "retired"}]}]}
	keys(judge({"workloadImages": [w]}, "1.30")) == {["eol-addon/retired", "blocker"]}
}

test_an_ingress_class_controller_is_evidence if {
	fs := judge({"ingressClasses": [{"name": "x", "controller": "example.com/retired"}]}, "1.30")
	some f in fs
	f.key == "eol-addon/retired"
	contains(f.detail, "(version unknown) via ingressclass")
}

test_a_tag_glob_takes_the_image_and_supersedes_weak_evidence if {
	inv := {
		"workloadImages": [image("docker.io/vendor/retired:v1.12.6-hardened1", "kube-system")],
		"ingressClasses": [{"name": "x", "controller": "example.com/retired"}],
	}
	keys(judge(inv, "1.30")) == {["eol-approaching/vendor", "warning"]} with data.upgradescope.kb.skew.approachingDays as 90
}

test_product_end_of_life_within_90_days_is_a_warning if {
	fs := judge({"workloadImages": [image("docker.io/vendor/retired:2.0-hardened", "x")]}, "1.30")
	some f in fs
	f.key == "eol-approaching/vendor"
	f.title == "Vendor build reaches end of life on 2027-01-15"
}

test_an_ended_release_line_is_a_blocker if {
	keys(judge({"workloadImages": [image("docker.io/lined/controller:v3.2.5", "x")]}, "1.30")) == {["eol-addon/lined/3.2", "blocker"]}
	keys(judge({"workloadImages": [image("docker.io/lined/controller:3.1.0", "x")]}, "1.30")) == {["eol-addon/lined/3.1", "blocker"]}
}

test_a_line_ending_within_90_days_is_a_warning if {
	keys(judge({"workloadImages": [image("docker.io/lined/controller:v3.3.1", "x")]}, "1.30")) == {["eol-approaching/lined/3.3", "warning"]}
}

test_a_line_whose_kubernetes_range_excludes_the_target_is_a_blocker if {
	img := {"workloadImages": [image("docker.io/lined/controller:v3.4.0", "x")]}
	count(judge(img, "1.34")) == 0
	keys(judge(img, "1.35")) == {["chart-incompat/lined/3.4", "blocker"]}
	keys(judge(img, "1.29")) == {["chart-incompat/lined/3.4", "blocker"]}
}

test_a_version_below_every_tracked_line_is_a_blocker_when_the_oldest_ended if {
	# 3.0's end of life is unknown: a version below it cannot be judged.
	keys(judge({"workloadImages": [image("docker.io/lined/controller:v2.9.0", "x")]}, "1.30")) == set()
	ended := json.patch(registry, [{"op": "replace", "path": "/lined/lines/4/eol", "value": "2025-01-01"}])
	inv := {"workloadImages": [image("docker.io/lined/controller:v2.9.0", "x")]}
	fs := addons.findings with input as input_of(inv, ["1.30"])
		with data.upgradescope.kb.addons as ended
		with data.upgradescope.kb.addonindex as index
		with data.upgradescope.kb.skew.approachingDays as 90
	keys(fs) == {["eol-addon/lined/below-3.0", "blocker"]}
}

test_versions_the_registry_cannot_place_are_info if {
	keys(judge({"workloadImages": [image("docker.io/lined/controller:latest", "x")]}, "1.30")) == {["addon-no-data/lined", "info"]}
	keys(judge({"workloadImages": [image("docker.io/lined/controller:v3.9.0", "x")]}, "1.30")) == {["addon-no-data/lined", "info"]}
	keys(judge({"workloadImages": [image("docker.io/lined/controller:v3.0.2", "x")]}, "1.30")) == {["addon-no-data/lined", "info"]}
}

test_a_version_outside_a_compat_interval_is_judged_by_nothing if {
	count(judge({"workloadImages": [image("registry.k8s.io/ranged/ranged:v0.18.0", "dns")]}, "1.33")) == 0
	keys(judge({"workloadImages": [image("registry.k8s.io/ranged/ranged:v0.14.0", "dns")]}, "1.33")) == {["chart-incompat/ranged", "blocker"]}
	count(judge({"workloadImages": [image("registry.k8s.io/ranged/ranged:v0.14.0", "dns")]}, "1.32")) == 0
}

test_helm_releases_are_evidence_with_their_app_version if {
	inv := {"helmReleases": [{"name": "l", "namespace": "ops", "chart": "lined", "chartVersion": "9.9.9", "appVersion": "v3.2.0", "status": "deployed"}]}
	keys(judge(inv, "1.30")) == {["eol-addon/lined/3.2", "blocker"]}
	uninstalled := {"helmReleases": [{"name": "l", "namespace": "ops", "chart": "lined", "appVersion": "3.2.0", "status": "uninstalled"}]}
	count(judge(uninstalled, "1.30")) == 0
}

test_a_supported_addon_without_lifecycle_data_is_silent if {
	count(judge({"workloadImages": [image("quay.io/quiet/quiet:1.0", "x")]}, "1.30")) == 0
}

test_installs_of_one_line_merge_into_one_finding if {
	inv := {"workloadImages": [
		image("docker.io/lined/controller:v3.2.1", "a"),
		image("docker.io/lined/controller:v3.2.7", "b"),
	]}
	fs := judge(inv, "1.30")
	count(fs) == 1
	some f in fs
	f.namespaces == ["a", "b"]
	f.detail == "Detected Lined 3.2.1, 3.2.7 via image in namespace(s): a, b (evidence: docker.io/lined/controller:v3.2.1; docker.io/lined/controller:v3.2.7)"
}

test_a_title_and_a_detail_name_twenty_versions_namespaces_and_evidences_and_count_the_rest if {
	inv := {"workloadImages": [image(sprintf("docker.io/lined/controller:v3.2.%d", [i]), sprintf("ns-%02d", [i])) | some i in numbers.range(10, 34)]}
	fs := judge(inv, "1.30")
	some f in fs
	versions := concat(", ", [sprintf("3.2.%d", [i]) | some i in numbers.range(10, 29)])
	namespaces := concat(", ", [sprintf("ns-%02d", [i]) | some i in numbers.range(10, 29)])
	evidence := concat("; ", [sprintf("docker.io/lined/controller:v3.2.%d", [i]) | some i in numbers.range(10, 29)])
	f.detail == sprintf("Detected Lined %s and 5 more via image in namespace(s): %s and 5 more (evidence: %s and 5 more)", [versions, namespaces, evidence])
	count(f.namespaces) == 25
}

test_a_runtime_without_data_names_twenty_nodes_and_counts_the_rest if {
	fs := judge({"nodes": [nodes("cri-o://1.33.2", 25)]}, "1.33")
	some f in fs
	f.key == "addon-no-data/cri-o"
	names := sort([sprintf("node-%d", [i]) | some i in numbers.range(1, 25)])
	f.detail == sprintf("25 node(s) run it: %s and 5 more.", [concat(", ", array.slice(names, 0, 20))])
}

test_a_runtime_on_more_nodes_than_the_inventory_names_counts_every_one if {
	group := object.union(nodes("cri-o://1.33.2", 3), {"count": 130})
	fs := judge({"nodes": [group]}, "1.33")
	some f in fs
	f.key == "addon-no-data/cri-o"
	f.detail == "130 node(s) run it: node-1, node-2, node-3 and 127 more."
}

test_unmatched_images_find_nothing if {
	count(judge({"workloadImages": [image("nginx:1.25", "web"), image("controller", "x")]}, "1.30")) == 0
}

# An organisation publishes more than its product (samples, demos, other products under
# Istio-like tags): a repository matcher claims whole path segments only.
test_a_repository_matcher_claims_no_other_repository_of_its_organisation if {
	inv := {"workloadImages": [
		image("docker.io/lined/examples-bookinfo-details-v1:3.1.0", "samples"),
		image("docker.io/lined/controller-demo:3.1.0", "samples"),
		image("docker.io/lined:3.1.0", "samples"),
		image("harbor.example/mirror/lined/controller:3.4.1", "lined"),
	]}
	ds := addons.detections with input as input_of(inv, ["1.30"])
		with data.upgradescope.kb.addons as registry
		with data.upgradescope.kb.addonindex as index
	{[d.id, d.version, d.evidence] | some d in ds} == {["lined", "3.4.1", "harbor.example/mirror/lined/controller:3.4.1"]}
}

test_a_single_segment_matcher_matches_the_last_path_segment if {
	one := json.patch(registry, [{"op": "add", "path": "/quiet/match/images", "value": ["registry.k8s.io/etcd"]}])
	idx := json.patch(index, [
		{"op": "add", "path": "/imagePaths/etcd", "value": [{"id": "quiet", "tag": ""}]},
		{"op": "add", "path": "/firstSegments/etcd", "value": true},
	])
	fs := addons.detections with input as input_of({"workloadImages": [image("registry.k8s.io/etcd:3.5.15-0", "kube-system")]}, ["1.30"])
		with data.upgradescope.kb.addons as one
		with data.upgradescope.kb.addonindex as idx
	{d.id | some d in fs} == {"quiet"}
}

test_weak_evidence_merges_into_an_image_detection_of_the_same_addon if {
	inv := {
		"workloadImages": [image("registry.k8s.io/retired/controller:v1.9.4", "ingress")],
		"ingressClasses": [{"name": "x", "controller": "example.com/retired"}],
	}
	some f in judge(inv, "1.30")
	f.detail == "Detected Retired 1.9.4 via image in namespace(s): ingress (evidence: registry.k8s.io/retired/controller:v1.9.4)"
}

gitops_chart(chart, target, version, kind) := {
	"tool": "argocd", "namespace": "argocd", "name": "app", "targetNamespace": target,
	"chart": chart, "version": version, "versionKind": kind,
}

installs_of(inventory) := got if {
	got := addons.installs with input as input_of(inventory, ["1.36"])
		with data.upgradescope.kb.addons as registry
		with data.upgradescope.kb.addonindex as index
}

test_a_gitops_chart_alone_is_an_install_in_the_namespace_it_deploys_into if {
	got := installs_of({"gitopsCharts": [gitops_chart("retired", "ingress", "4.11.2", "exact")]})
	got == {["retired", ""]: {
		"id": "retired", "version": "", "namespaces": ["ingress"], "sources": ["gitops"],
		"evidence": ["argocd argocd/app: chart retired 4.11.2"], "objects": [], "objectsOmitted": 0,
	}}
}

test_an_add_on_retired_as_a_whole_is_end_of_life_from_its_chart_alone if {
	fs := judge({"gitopsCharts": [gitops_chart("retired", "ingress", "", "")]}, "1.36")
	some f in fs
	f.key == "eol-addon/retired"
	f.severity == "blocker"
}

test_a_gitops_chart_gives_way_to_an_image_in_its_namespace if {
	got := installs_of({
		"gitopsCharts": [gitops_chart("retired", "ingress", "4.11.2", "exact")],
		"workloadImages": [image("registry.k8s.io/retired/controller:v1.11.3", "ingress")],
	})
	[k | some k, _ in got] == [["retired", "1.11.3"]]
}

test_a_gitops_chart_in_another_namespace_is_another_install if {
	got := installs_of({
		"gitopsCharts": [gitops_chart("retired", "edge", "4.11.2", "exact")],
		"workloadImages": [image("registry.k8s.io/retired/controller:v1.11.3", "ingress")],
	})
	got[["retired", ""]].namespaces == ["edge"]
	got[["retired", "1.11.3"]].namespaces == ["ingress"]
}

test_a_gitops_chart_gives_way_to_a_strong_detection_that_supersedes_it if {
	got := installs_of({
		"gitopsCharts": [gitops_chart("retired", "edge", "", "")],
		"workloadImages": [image("docker.io/vendor/retired:1.2-hardened", "ingress")],
	})
	[k | some k, _ in got] == [["vendor", "1.2.0"]]
}

test_a_range_is_no_chart_version if {
	got := installs_of({"gitopsCharts": [gitops_chart("retired", "ingress", "4.*", "range")]})
	got[["retired", ""]].evidence == ["argocd argocd/app: chart retired"]
}

test_a_helm_release_in_the_chart_namespace_records_the_real_version_and_the_chart_source_gives_way if {
	got := installs_of({
		"gitopsCharts": [gitops_chart("lined", "edge", "3.4.0", "exact")],
		"helmReleases": [{"name": "lined", "namespace": "edge", "chart": "lined", "chartVersion": "3.4.1", "appVersion": "3.4.1", "status": "deployed"}],
	})
	got == {["lined", "3.4.1"]: {
		"id": "lined", "version": "3.4.1", "namespaces": ["edge"], "sources": ["helm"], "evidence": ["lined"],
		"objects": [], "objectsOmitted": 0,
	}}
}

nodes(runtime, n) := {"kubeletVersion": "v1.33.4", "containerRuntime": runtime, "count": n, "names": [sprintf("node-%d", [i]) | some i in numbers.range(1, n)]}

test_a_node_runtime_is_an_install_on_the_nodes_that_run_it if {
	fs := judge({"nodes": [nodes("lined://3.1.9", 5), nodes("lined://3.4.0", 1), nodes("other://1.0.0", 2)]}, "1.33")
	keys(fs) == {["eol-addon/lined/3.1", "blocker"], ["addon-no-data/other", "info"]}
	some f in fs
	f.detail == "Detected Lined 3.1.9 on nodes (evidence: 5 node(s) with lined://3.1.9: node-1, node-2, node-3, …)"
	f.namespaces == []
}

test_a_runtime_no_entry_lists_is_reported_without_data if {
	fs := judge({"nodes": [nodes("cri-o://1.33.2", 2), nodes("cri-o://1.32.9", 1)]}, "1.33")
	some f in fs
	f.key == "addon-no-data/cri-o"
	f.title == "Container runtime cri-o: no lifecycle data (cri-o://1.32.9, cri-o://1.33.2)"

	# the fixture names node-1 in both groups: three nodes, two names
	f.detail == "3 node(s) run it: node-1, node-2 and 1 more."
}

test_releases_of_one_chart_are_one_install_per_version_across_their_namespaces if {
	got := installs_of({"helmReleases": [
		lined_release("a", "ops", "3.4.1", "deployed"),
		lined_release("b", "edge", "3.4.1", "deployed"),
		lined_release("c", "web", "3.3.0", "failed"),
		lined_release("d", "gone", "3.4.1", "uninstalled"),
	]})
	got == {
		["lined", "3.3.0"]: {
			"id": "lined", "version": "3.3.0", "namespaces": ["web"], "sources": ["helm"], "evidence": ["lined"],
			"objects": [], "objectsOmitted": 0,
		},
		["lined", "3.4.1"]: {
			"id": "lined", "version": "3.4.1", "namespaces": ["edge", "ops"], "sources": ["helm"], "evidence": ["lined"],
			"objects": [], "objectsOmitted": 0,
		},
	}
}

lined_release(name, ns, app, status) := {"name": name, "namespace": ns, "chart": "lined", "chartVersion": "9.9.9", "appVersion": app, "status": status}
