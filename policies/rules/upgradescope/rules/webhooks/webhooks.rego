# METADATA
# title: Admission webhooks
# description: |
#   Admission webhooks that stall an upgrade or stop doing their job after it
#   (input.inventory.preflight.webhooks): a webhook that fails closed while nothing backs its
#   service, one that fails closed on what the control plane needs in kube-system, and one
#   whose rules name only API versions the target no longer serves.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
#   - ref: https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/
# custom:
#   category: admission-webhook
package upgradescope.rules.webhooks

import data.upgradescope.kb
import data.upgradescope.lib.apis
import data.upgradescope.lib.preflight

docs := "https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/"

good_practices := "https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/"

configured := object.get(object.get(input.inventory, "preflight", {}), "webhooks", [])

# METADATA
# title: Fail-closed webhooks whose service backs nothing
# description: |
#   With failurePolicy Fail (the default of admissionregistration.k8s.io/v1) the API server
#   rejects every request a webhook matches when it cannot call it. A webhook whose service
#   is missing or has no ready endpoints rejects those requests now, and during the upgrade,
#   as nodes are drained, the pods it matches (its own too, if it matches them) cannot be
#   recreated.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
#   - ref: https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#avoid-self-mutation
# custom:
#   families:
#     - id: admission-webhook-no-ready-endpoints
#       title: Fail-closed admission webhooks whose service backs nothing
#       category: admission-webhook
#       reads: [preflight.webhooks]
#       capabilities: [admission-webhooks, service-endpoints]
#       modes: [cluster]
#       severity: >-
#         blocker when the effective failurePolicy is Fail (as written, or unset at
#         admissionregistration.k8s.io/v1) and its service was not found or has 0 ready
#         endpoints; webhooks called by URL, and files mode (no endpoints), have no finding
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
#         - https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#avoid-self-mutation
findings contains f if {
	some w in configured
	preflight.failure_policy(w) == "Fail"
	preflight.down(w.service)
	some t in input.targets
	f := {
		"key": key("no-ready-endpoints", w),
		"category": "admission-webhook",
		"severity": "blocker",
		"target": t,
		"title": sprintf("%s: webhook %s fails closed and its service %s %s", [
			configuration(w), w.name, preflight.service_name(w.service), preflight.why_down(w.service),
		]),
		"detail": concat(" ", [
			"With failurePolicy Fail the API server rejects every request this webhook matches when it cannot call it,",
			"so those requests are rejected now. During the upgrade nodes are drained and pods recreated elsewhere:",
			"the pods this webhook matches (its own too, if it matches them) cannot be created again until its service is back.",
		]),
		"remediation": concat(" ", [
			"Bring the webhook's pods back (more than one replica, with a PodDisruptionBudget), or set failurePolicy: Ignore,",
			"or delete the configuration if nothing serves the webhook any more.",
		]),
		"objects": [config_ref(w), preflight.service_ref(w.service)],
		"namespaces": [w.service.namespace],
		"citations": [sprintf("%s#failure-policy", [docs]), sprintf("%s#avoid-self-mutation", [good_practices])],
	}
}

# METADATA
# title: Fail-closed webhooks on what kube-system needs
# description: |
#   A webhook that fails closed on every resource, or on the pods, nodes, leases or service
#   accounts of kube-system, with no namespace or object selector leaving the control plane
#   out, can stop the control plane from recovering while its own backend is rescheduled: the
#   docs advise excluding kube-system, and mutating node leases can fail node upgrades.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace
#   - ref: https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#webhook-limit-scope
# custom:
#   families:
#     - id: admission-webhook-kube-system
#       title: Fail-closed admission webhooks on what kube-system needs
#       category: admission-webhook
#       reads: [preflight.webhooks]
#       capabilities: [admission-webhooks]
#       modes: [files, cluster]
#       severity: >-
#         warning when the effective failurePolicy is Fail, coversKubeSystem and
#         objectSelectorEmpty are true, and a rule creating or updating (operations *, CREATE
#         or UPDATE) matches every resource (* or */...), or pods, nodes or serviceaccounts
#         (group "" or *) or leases (group coordination.k8s.io or *)
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace
#         - https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#webhook-limit-scope
findings contains f if {
	some w in configured
	preflight.failure_policy(w) == "Fail"
	w.coversKubeSystem
	w.objectSelectorEmpty
	matched := critical_matches(w)
	count(matched) > 0
	some t in input.targets
	f := {
		"key": key("kube-system", w),
		"category": "admission-webhook",
		"severity": "warning",
		"target": t,
		"title": sprintf("%s: webhook %s fails closed on %s and does not leave kube-system out", [
			configuration(w), w.name, concat(", ", matched),
		]),
		"detail": concat(" ", [
			"kube-system holds what the control plane runs on (its service accounts, pods such as CoreDNS, the leases of",
			"leader election). A webhook that rejects those requests whenever its own backend is down, as it may be while",
			"nodes are drained, can stop the control plane from recovering; mutating node leases can fail node upgrades.",
		]),
		"remediation": concat(" ", [
			"Leave kube-system out with a namespaceSelector (kubernetes.io/metadata.name NotIn [kube-system]) or an",
			"objectSelector, narrow the rules to what the webhook needs, or set failurePolicy: Ignore.",
		]),
		"objects": [config_ref(w)],
		"namespaces": ["kube-system"],
		"citations": [sprintf("%s#avoiding-operating-on-the-kube-system-namespace", [docs]), sprintf("%s#webhook-limit-scope", [good_practices])],
	}
}

# METADATA
# title: Webhooks whose rules name only removed versions
# description: |
#   A rule matches requests by group, version and resource. When every version a rule names
#   for a resource is one the target no longer serves, no request can match it, not even
#   through matchPolicy Equivalent (which converts requests only to versions the API server
#   serves): the webhook silently stops validating or mutating that resource.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchpolicy
#   - ref: https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/generic/webhook.go
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
# custom:
#   families:
#     - id: admission-webhook-removed-versions
#       title: Admission webhooks whose rules name only removed API versions
#       category: admission-webhook
#       reads: [preflight.webhooks]
#       capabilities: [admission-webhooks]
#       modes: [files, cluster]
#       severity: >-
#         warning at each target where, for a rule's named group and resource (neither *),
#         every apiVersion the rule lists is in the knowledge base and removed at or before
#         the target; a rule listing * or a version the knowledge base does not know has no
#         finding
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchpolicy
#         - https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/generic/webhook.go
#         - https://kubernetes.io/docs/reference/using-api/deprecation-guide/
findings contains f if {
	some w in configured
	some t in input.targets
	stale := stale_matches(w, t)
	count(stale) > 0
	f := {
		"key": key("removed-versions", w),
		"category": "admission-webhook",
		"severity": "warning",
		"target": t,
		"title": sprintf("%s: webhook %s matches only %s, which %s does not serve", [
			configuration(w), w.name, concat("; ", [s.label | some s in stale]), t,
		]),
		"detail": concat("", [
			"No request can match these rules at the target, not even through matchPolicy Equivalent, which converts a ",
			"request only to versions the API server serves: the webhook silently stops validating or mutating them.",
			served_phrase(stale),
		]),
		"remediation": "Add the versions the target serves (or \"*\") to the rules' apiVersions, in the group that serves the resource now.",
		"objects": [config_ref(w)],
		"namespaces": [],
		"citations": [
			sprintf("%s#matching-requests-matchpolicy", [docs]),
			"https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/generic/webhook.go",
			"https://kubernetes.io/docs/reference/using-api/deprecation-guide/",
		],
	}
}

# What the control plane needs in kube-system, by resource, and the group it is served in.
critical_groups := {"pods": "", "nodes": "", "serviceaccounts": "", "leases": "coordination.k8s.io"}

# critical_matches lists, sorted, what the webhook's writing rules match of that.
critical_matches(w) := sort({label |
	some r in object.get(w, "rules", [])
	writes(r)
	some g in object.get(r, "apiGroups", [])
	some res in object.get(r, "resources", [])
	label := critical(g, base(res))
})

writes(r) if {
	some op in object.get(r, "operations", [])
	op in {"*", "CREATE", "UPDATE"}
}

critical(_, "*") := "every resource"

critical(g, res) := res if {
	g in {"*", critical_groups[res]}
}

# The resource of a rule's entry without its subresource ("pods/status" is pods).
base(res) := split(res, "/")[0]

# stale_matches lists, sorted by label, each group and resource a rule names only at versions
# removed by the target, with what the target serves instead.
stale_matches(w, t) := [x[1] | some x in sort({[s.label, s] |
	some r in object.get(w, "rules", [])
	versions := object.get(r, "apiVersions", [])
	count(versions) > 0
	not "*" in versions
	some g in object.get(r, "apiGroups", [])
	g != "*"
	some res in object.get(r, "resources", [])
	b := base(res)
	b != "*"
	entries := [apis.by_resource[sprintf("%s/%s/%s", [apis.group_name(g), v, b])] | some v in versions]
	count(entries) == count(versions)
	every k in entries {
		apis.removed_by(kb.apis[k], t)
	}
	s := {
		"label": sprintf("%s %s", [concat(", ", sort([api_version(g, v) | some v in versions])), b]),
		"served": {apis.api_version(kb.apis[n]) | some k in entries; n := apis.successor(k, t)},
	}
})]

served_phrase(stale) := sprintf(" The target serves them as %s.", [concat(", ", served)]) if {
	served := sort({x | some s in stale; some x in s.served})
	count(served) > 0
} else := ""

api_version("", v) := v

api_version(g, v) := sprintf("%s/%s", [g, v]) if g != ""

key(id, w) := sprintf("admission-webhook/%s/%s/%s/%s", [id, object.get(w.configuration, "kind", "WebhookConfiguration"), w.configuration.name, w.name])

configuration(w) := sprintf("%s %s", [object.get(w.configuration, "kind", "WebhookConfiguration"), w.configuration.name])

config_ref(w) := object.union({"kind": "WebhookConfiguration"}, w.configuration)
