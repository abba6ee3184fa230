package upgradescope.rules.webhooks_test

import data.upgradescope.rules.webhooks

judge(hooks, t) := fs if {
	fs := webhooks.findings with input as {
		"inventory": {"source": "cluster", "preflight": {"webhooks": hooks}},
		"targets": [t],
	}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

with_key(fs, prefix) := {f | some f in fs; startswith(f.key, prefix)}

config := {"kind": "ValidatingWebhookConfiguration", "name": "shop-policy"}

harmless_rule := {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}

hook(extra) := object.union(
	{
		"configuration": config,
		"apiVersion": "admissionregistration.k8s.io/v1",
		"name": "check.shop.example.com",
		"failurePolicy": "Fail",
		"rules": [harmless_rule],
		"coversKubeSystem": false,
		"objectSelectorEmpty": true,
	},
	extra,
)

service(found, ready) := {"service": object.union(
	{"namespace": "shop", "name": "policy", "port": 443, "found": found},
	ready,
)}

# No ready endpoints -----------------------------------------------------------------------

pods_rule := {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}

test_a_fail_closed_webhook_whose_service_has_no_ready_endpoints_is_a_blocker_naming_both if {
	f := only(judge([hook(object.union(service(true, {"readyEndpoints": 0}), {"rules": [pods_rule]}))], "1.35"))
	f.key == "admission-webhook/no-ready-endpoints/ValidatingWebhookConfiguration/shop-policy/check.shop.example.com"
	f.category == "admission-webhook"
	f.severity == "blocker"
	f.title == "ValidatingWebhookConfiguration shop-policy: webhook check.shop.example.com fails closed and its service shop/policy has no ready endpoints"
	f.objects == [config, {"kind": "Service", "namespace": "shop", "name": "policy"}]
	f.namespaces == ["shop"]
}

test_a_webhook_without_endpoints_blocks_only_when_it_matches_what_the_upgrade_writes if {
	cases := [
		# [rule groups, severity, what the detail names]
		[["*"], "blocker", "Its rules name groups the upgrade writes or waits on (every group)"],
		[[""], "blocker", "(the core group)"],
		[["apps", "example.com"], "blocker", "(apps)"],
		[["policy", "batch"], "blocker", "(batch, policy)"],
		[["coordination.k8s.io"], "blocker", "coordination.k8s.io"],
		[["rbac.authorization.k8s.io"], "blocker", "rbac.authorization.k8s.io"],
		[["discovery.k8s.io"], "blocker", "discovery.k8s.io"],
		[["apiextensions.k8s.io"], "blocker", "apiextensions.k8s.io"],
		[["certificates.k8s.io"], "blocker", "certificates.k8s.io"],
		[["storage.k8s.io"], "blocker", "storage.k8s.io"],
		[["flowcontrol.apiserver.k8s.io"], "blocker", "flowcontrol.apiserver.k8s.io"],
		[["cert-manager.io", "acme.cert-manager.io"], "warning", "Its rules match only groups the upgrade neither writes nor waits on"],
		[["networking.k8s.io"], "warning", "only groups"],
		# never called for webhook configurations or admission policies
		[["admissionregistration.k8s.io"], "warning", "only groups"],
	]
	every c in cases {
		r := {"operations": ["CREATE", "UPDATE"], "apiGroups": c[0], "apiVersions": ["*"], "resources": ["*/*"]}
		f := only(judge([hook(object.union(service(true, {"readyEndpoints": 0}), {"rules": [r]}))], "1.35"))
		f.severity == c[1]
		contains(f.detail, c[2])
	}
}

test_covering_kube_system_does_not_make_a_crd_webhook_without_endpoints_a_blocker if {
	# cert-manager's stock webhook: every namespace without an opt-out label, kube-system too
	r := {"operations": ["CREATE", "UPDATE"], "apiGroups": ["cert-manager.io"], "apiVersions": ["v1"], "resources": ["*/*"]}
	w := hook(object.union(service(false, {}), {"rules": [r], "coversKubeSystem": true}))
	only(judge([w], "1.35")).severity == "warning"
}

test_a_missing_service_is_named_as_missing if {
	f := only(judge([hook(service(false, {}))], "1.35"))
	endswith(f.title, "its service shop/policy does not exist")
}

test_the_effective_failure_policy_decides if {
	down := service(true, {"readyEndpoints": 0})
	cases := [
		# [fields, want]
		[{"failurePolicy": "Fail"}, 1],
		[{"failurePolicy": "Ignore"}, 0],
		[{"failurePolicy": null}, 1], # unset at v1: Fail
		[{"failurePolicy": null, "apiVersion": "admissionregistration.k8s.io/v1beta1"}, 0], # unset at v1beta1: Ignore
		[{"failurePolicy": null, "apiVersion": null}, 1], # a version not recorded: v1, the only one served
	]
	every c in cases {
		w := object.filter(object.union(hook(down), c[0]), {k | some k, v in object.union(hook(down), c[0]); v != null})
		count(judge([w], "1.35")) == c[1]
	}
}

test_a_service_with_ready_endpoints_or_without_live_state_is_not_down if {
	count(judge([hook(service(true, {"readyEndpoints": 1}))], "1.35")) == 0

	# files mode: neither found nor readyEndpoints
	count(judge([hook({"service": {"namespace": "shop", "name": "policy"}})], "1.35")) == 0

	# called by URL
	count(judge([hook({})], "1.35")) == 0
}

# kube-system ------------------------------------------------------------------------------

kube_system(rule, extra) := hook(object.union({"coversKubeSystem": true, "rules": [rule]}, extra))

rule(groups, resources, ops) := {"operations": ops, "apiGroups": groups, "apiVersions": ["*"], "resources": resources}

test_a_fail_closed_webhook_on_every_resource_in_kube_system_is_a_warning if {
	f := only(judge([kube_system(rule(["*"], ["*"], ["*"]), {})], "1.35"))
	f.key == "admission-webhook/kube-system/ValidatingWebhookConfiguration/shop-policy/check.shop.example.com"
	f.severity == "warning"
	f.title == "ValidatingWebhookConfiguration shop-policy: webhook check.shop.example.com fails closed on every resource and does not leave kube-system out"
	f.namespaces == ["kube-system"]
	"https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace" in f.citations
}

test_what_the_control_plane_needs_is_matched_in_its_group if {
	cases := [
		# [rule, matched]
		[rule([""], ["pods"], ["CREATE"]), "pods"],
		[rule([""], ["pods/status"], ["UPDATE"]), "pods"],
		[rule(["*"], ["nodes"], ["*"]), "nodes"],
		[rule([""], ["serviceaccounts"], ["CREATE", "UPDATE"]), "serviceaccounts"],
		[rule(["coordination.k8s.io"], ["leases"], ["UPDATE"]), "leases"],
		[rule(["*"], ["*"], ["UPDATE"]), "every resource"],
		[rule(["*"], ["*/*"], ["CREATE"]), "every resource"],
		[rule(["*"], ["*/scale"], ["UPDATE"]), "every resource"],
		[rule([""], ["*"], ["CREATE"]), "nodes, pods, serviceaccounts"], # every core resource: what kube-system needs there
		[rule(["coordination.k8s.io"], ["*/*"], ["UPDATE"]), "leases"],
	]
	every c in cases {
		f := only(judge([kube_system(c[0], {})], "1.35"))
		contains(f.title, sprintf("fails closed on %s and", [c[1]]))
	}
}

test_rules_that_leave_the_control_plane_alone_are_not_findings if {
	cases := [
		rule(["apps"], ["deployments"], ["*"]), # not something kube-system needs
		rule(["apps"], ["pods"], ["*"]), # pods are not served in apps
		rule([""], ["leases"], ["*"]), # leases are not served in the core group
		rule([""], ["pods"], ["DELETE", "CONNECT"]), # neither creates nor updates
		rule(["apps"], ["*/scale"], ["UPDATE"]), # every resource of apps: none kube-system needs
		rule(["cert-manager.io", "acme.cert-manager.io"], ["*/*"], ["CREATE", "UPDATE"]), # cert-manager's own webhook
	]
	every r in cases {
		count(judge([kube_system(r, {})], "1.35")) == 0
	}
}

test_the_kube_system_warning_says_match_conditions_are_not_read if {
	f := only(judge([kube_system(rule(["*"], ["*"], ["*"]), {})], "1.35"))
	contains(f.detail, "The inventory does not show matchConditions: a webhook may leave kube-system out with a matchCondition")
}

test_the_kube_system_warning_needs_fail_closed_and_no_selector_leaving_it_out if {
	r := rule(["*"], ["*"], ["*"])
	count(judge([kube_system(r, {"failurePolicy": "Ignore"})], "1.35")) == 0
	count(judge([kube_system(r, {"objectSelectorEmpty": false})], "1.35")) == 0
	count(judge([hook({"rules": [r]})], "1.35")) == 0
}

test_several_matches_are_listed_sorted if {
	w := hook({"coversKubeSystem": true, "rules": [
		rule(["coordination.k8s.io"], ["leases"], ["UPDATE"]),
		rule([""], ["pods", "nodes"], ["CREATE"]),
	]})
	contains(only(judge([w], "1.35")).title, "fails closed on leases, nodes, pods and")
}

# Removed versions -------------------------------------------------------------------------

versioned(groups, versions, resources) := hook({
	"failurePolicy": "Ignore",
	"rules": [{"operations": ["CREATE"], "apiGroups": groups, "apiVersions": versions, "resources": resources}],
})

test_a_rule_naming_only_removed_versions_is_a_warning_from_the_removal if {
	w := versioned(["extensions"], ["v1beta1"], ["ingresses"])
	f := only(judge([w], "1.22"))
	f.key == "admission-webhook/removed-versions/ValidatingWebhookConfiguration/shop-policy/check.shop.example.com"
	f.severity == "warning"
	f.target == "1.22"
	f.title == "ValidatingWebhookConfiguration shop-policy: webhook check.shop.example.com matches only extensions/v1beta1 ingresses, which 1.22 does not serve"
	endswith(f.detail, "The target serves them as networking.k8s.io/v1.")
	f.namespaces == []

	# the minor before the removal still serves it
	count(judge([w], "1.21")) == 0
}

test_a_rule_that_still_names_a_served_version_keeps_matching if {
	count(judge([versioned(["apps"], ["v1beta1", "v1"], ["deployments"])], "1.35")) == 0
	count(judge([versioned(["apps"], ["*"], ["deployments"])], "1.35")) == 0
}

test_only_named_groups_resources_and_known_versions_are_judged if {
	count(judge([versioned(["*"], ["v1beta1"], ["ingresses"])], "1.35")) == 0
	count(judge([versioned(["extensions"], ["v1beta1"], ["*"])], "1.35")) == 0
	count(judge([versioned(["example.com"], ["v1alpha1"], ["widgets"])], "1.35")) == 0
	count(judge([versioned(["extensions"], [], ["ingresses"])], "1.35")) == 0
}

test_every_stale_resource_is_listed_once_sorted if {
	w := versioned(["apps"], ["v1beta2"], ["replicasets", "deployments/scale", "deployments", "daemonsets"])
	f := only(judge([w], "1.35"))
	contains(f.title, "matches only apps/v1beta2 daemonsets; apps/v1beta2 deployments; apps/v1beta2 replicasets, which")

	# apps/v1beta1 served no daemonsets: a version the knowledge base does not know for a
	# resource leaves that resource unjudged
	g := only(judge([versioned(["apps"], ["v1beta1", "v1beta2"], ["daemonsets", "deployments"])], "1.35"))
	contains(g.title, "matches only apps/v1beta1, apps/v1beta2 deployments, which")
}

ingress_rule(group, version) := {"operations": ["CREATE", "UPDATE"], "apiGroups": [group], "apiVersions": [version], "resources": ["ingresses"]}

test_a_removed_version_is_not_stale_while_another_rule_matches_the_resource_where_the_target_serves_it if {
	old := ingress_rule("extensions", "v1beta1")
	cases := [
		# [the webhook's other rule, findings at 1.22]
		[ingress_rule("networking.k8s.io", "v1"), 0], # the usual way to cover 1.14 to 1.21 and after
		[ingress_rule("networking.k8s.io", "*"), 0],
		[ingress_rule("*", "v1"), 0],
		[object.union(ingress_rule("networking.k8s.io", "v1"), {"resources": ["*"]}), 0],
		[object.union(ingress_rule("networking.k8s.io", "v1"), {"resources": ["ingresses/status"]}), 0],
		[ingress_rule("networking.k8s.io", "v1beta1"), 1], # removed at 1.22 too
		[ingress_rule("example.com", "v1"), 1], # a resource of the same name no built-in group serves
		[ingress_rule("extensions", "*"), 1], # extensions serves ingresses at no version at 1.22
		[object.union(ingress_rule("networking.k8s.io", "v1"), {"resources": ["ingressclasses"]}), 1],
	]
	every c in cases {
		w := hook({"failurePolicy": "Ignore", "rules": [old, c[0]]})
		count(judge([w], "1.22")) == c[1]
	}
}

test_the_other_rule_covers_only_its_own_resource if {
	w := hook({"failurePolicy": "Ignore", "rules": [
		{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1beta2"], "resources": ["deployments", "daemonsets"]},
		{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]},
	]})
	contains(only(judge([w], "1.35")).title, "matches only apps/v1beta2 daemonsets, which")
}

test_core_versions_are_written_without_a_group if {
	# core/v1 is served everywhere: a rule naming only it is never stale
	count(judge([versioned([""], ["v1"], ["pods"])], "1.35")) == 0
}

test_no_webhooks_no_findings if {
	count(judge([], "1.35")) == 0
	count(webhooks.findings) == 0 with input as {"inventory": {"source": "files"}, "targets": ["1.35"]}
}

test_all_three_families_can_hold_for_one_webhook if {
	w := hook({
		"coversKubeSystem": true,
		"rules": [rule([""], ["pods"], ["*"]), {"operations": ["*"], "apiGroups": ["extensions"], "apiVersions": ["v1beta1"], "resources": ["ingresses"]}],
		"service": {"namespace": "shop", "name": "policy", "found": true, "readyEndpoints": 0},
	})
	fs := judge([w], "1.35")
	count(with_key(fs, "admission-webhook/no-ready-endpoints/")) == 1
	count(with_key(fs, "admission-webhook/kube-system/")) == 1
	count(with_key(fs, "admission-webhook/removed-versions/")) == 1
}

# No core version has been removed yet: a made-up one shows how a rule naming only it reads,
# and what the detail says when nothing replaces it.
test_a_removed_core_version_without_a_successor_reads_without_a_group if {
	pods_v0 := {"group": "", "version": "v0", "kind": "Pod", "introduced": "1.0", "removed": "1.10", "resource": "pods"}
	fs := webhooks.findings with input as {
		"inventory": {"source": "files", "preflight": {"webhooks": [versioned([""], ["v0"], ["pods"])]}},
		"targets": ["1.35"],
	}
		with data.upgradescope.kb.apis as {"core/v0/Pod": pods_v0}
		with data.upgradescope.kb.apiindex as {"byResource": {"core/v0/pods": "core/v0/Pod"}, "byGroupKind": {}, "replacements": {}}
	f := only(fs)
	contains(f.title, "matches only v0 pods, which 1.35 does not serve")
	endswith(f.detail, "stops validating or mutating them.")
}
