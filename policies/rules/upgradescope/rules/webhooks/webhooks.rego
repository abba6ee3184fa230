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
import data.upgradescope.lib.versions

docs := "https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/"

good_practices := "https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/"

configured := object.get(object.get(input.inventory, "preflight", {}), "webhooks", [])

# METADATA
# title: Fail-closed webhooks whose service backs nothing
# description: |
#   With failurePolicy Fail (the default of admissionregistration.k8s.io/v1) the API server
#   rejects every request a webhook matches when it cannot call it. A webhook whose service
#   is missing or has no ready endpoints rejects those requests now; it stalls the upgrade
#   when its rules match a group the upgrade writes or needs (pods recreated off drained
#   nodes, node leases and CSRs of new nodes, the control plane's RBAC and flow-control
#   defaults, controllers' status, EndpointSlices, volume attachments, add-ons' CRDs). A
#   webhook on other groups only (a CRD's, say) is broken today but stalls nothing of the
#   upgrade. admissionregistration.k8s.io does not count: webhooks are never called for
#   webhook configurations or admission policies.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-deadlocks-in-self-hosted-webhooks
#   - ref: https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#avoid-self-mutation
#   - ref: https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/predicates/rules/rules.go
# custom:
#   families:
#     - id: admission-webhook-no-ready-endpoints
#       title: Fail-closed admission webhooks whose service backs nothing
#       category: admission-webhook
#       reads: [preflight.webhooks]
#       capabilities: [admission-webhooks, service-endpoints]
#       modes: [cluster]
#       severity: >-
#         when the effective failurePolicy is Fail (as written, or unset at
#         admissionregistration.k8s.io/v1) and its service was not found or has 0 ready
#         endpoints: blocker when a rule names a group the upgrade writes or needs (*, the
#         core group "", apps, batch, policy, coordination.k8s.io, rbac.authorization.k8s.io,
#         discovery.k8s.io, apiextensions.k8s.io, certificates.k8s.io, storage.k8s.io,
#         flowcontrol.apiserver.k8s.io), warning when its rules name only other groups;
#         whether it covers kube-system does not change the severity (a CRD's group there is
#         still not written by the upgrade); webhooks called by URL, and files mode (no
#         endpoints), have no finding
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-deadlocks-in-self-hosted-webhooks
#         - https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#avoid-self-mutation
#         - https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/predicates/rules/rules.go
#         - https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/
#         - https://kubernetes.io/docs/concepts/cluster-administration/flow-control/
findings contains f if {
	some w in configured
	preflight.down(w.service)
	preflight.failure_policy(w) == "Fail"
	stalls := upgrade_groups_matched(w)
	some t in input.targets
	f := down_finding(w, stalls, t)
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
#         or UPDATE) matches every resource (group * with resource * or */...), or pods, nodes
#         or serviceaccounts (group "" or *, by name or *) or leases (group
#         coordination.k8s.io or *, by name or *); matchConditions are not read, so a webhook
#         leaving kube-system out with one is still a finding (its detail says so)
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#avoiding-operating-on-the-kube-system-namespace
#         - https://kubernetes.io/docs/concepts/cluster-administration/admission-webhooks-good-practices/#webhook-limit-scope
findings contains f if {
	some i in {i | some [i, _] in critical}
	w := configured[i]
	preflight.failure_policy(w) == "Fail"
	matched := sort({label | some [i, label] in critical})
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
			"The inventory does not show matchConditions: a webhook may leave kube-system out with a matchCondition,",
			"which this check cannot see.",
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
#   serves): the webhook silently stops validating or mutating that resource, unless another
#   of its rules names the resource where the target serves it (the usual way to cover a
#   resource across a move, such as Ingress from extensions to networking.k8s.io).
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
#         the target, unless a rule of the same webhook names that resource (by name or *)
#         in a group and version (or *) the knowledge base knows the target serves it in, in
#         any group since resources move between groups; a rule listing * or a version the
#         knowledge base does not know has no finding
#       citations:
#         - https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchpolicy
#         - https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/admission/plugin/webhook/generic/webhook.go
#         - https://kubernetes.io/docs/reference/using-api/deprecation-guide/
findings contains f if {
	some i, candidates in stale_candidates
	w := configured[i]
	some t in input.targets
	stale := stale_matches(candidates, object.get(w, "rules", []), t)
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

# METADATA
# description: |
#   [webhook index, what it matches] for each writing rule of a webhook that covers
#   kube-system with no object selector and matches what the control plane needs there. One
#   pass over every webhook's rules in a rule body: a function of the whole webhook, called
#   per webhook, costs several times more.
critical contains [i, label] if {
	some i, w in configured
	w.coversKubeSystem
	w.objectSelectorEmpty
	some r in object.get(w, "rules", [])
	count([op | some op in object.get(r, "operations", []); op in {"*", "CREATE", "UPDATE"}]) > 0
	some g in object.get(r, "apiGroups", [])
	some res in object.get(r, "resources", [])
	some label in critical_labels(g, base(res))
}

# What a rule's group and resource (without its subresource) match of what kube-system
# needs: every resource only when the group is "*" too; "*" in one group matches what
# kube-system needs in that group, and nothing in a group that serves none of it.
critical_labels("*", "*") := {"every resource"}

critical_labels(g, "*") := {res | some res, cg in critical_groups; cg == g} if g != "*"

critical_labels(g, res) := {res | g in {"*", critical_groups[res]}} if res != "*"

# The resource of a rule's entry without its subresource ("pods/status" is pods).
base(res) := split(res, "/")[0]

# METADATA
# description: |
#   By the webhook's index: each group and resource a rule names only at versions the
#   knowledge base knows as removed, as [label, the ordinal of the latest removal, entries],
#   sorted by label. The same at every target, so a target only compares ordinals. A rule
#   naming "*" as a group, version or resource never gets here: no removed version has it.
stale_candidates[i] := candidates if {
	some i in {i | some [i, _] in removed_only}
	candidates := sort({c |
		some r in object.get(configured[i], "rules", [])
		some [g, b, named] in removed_in_rule(r)
		c := candidate(g, b, named)
	})
	count(candidates) > 0
}

# [webhook index, rule] for each rule naming some group only at versions the knowledge base
# knows as removed: one cheap pass over every webhook's rules, so that the few webhooks it
# finds are the only ones read resource by resource.
removed_only contains [i, r] if {
	some i, w in configured
	some r in object.get(w, "rules", [])
	count(removed_in_rule(r)) > 0
}

# The [group, resource, versions] of a rule whose versions in that group are all ones the
# knowledge base knows as removed.
removed_in_rule(r) := {[g, base(res), named] |
	named := object.get(r, "apiVersions", [])
	count(named) > 0
	some g in object.get(r, "apiGroups", [])
	g in removed_groups
	count([v | some v in named; [g, v] in removed_group_versions]) == count(named)
	some res in object.get(r, "resources", [])
}

# A candidate when the knowledge base knows the resource at every version named: [label,
# the ordinal of the latest removal, entries, resource].
candidate(g, b, named) := [label, last, entries, b] if {
	entries := [apis.by_resource[sprintf("%s/%s/%s", [apis.group_name(g), v, b])] | some v in named]
	count(entries) == count(named)
	last := max([versions.ordinal(kb.apis[k].removed) | some k in entries])
	label := sprintf("%s %s", [concat(", ", sort([api_version(g, v) | some v in named])), b])
}

# The groups and the [group, version] pairs the knowledge base knows as removed at some
# minor: cheap tests that rule out almost every rule before its resources are read. Complete
# rules, evaluated once: a partial set looked up by a computed key is evaluated again for
# each lookup.
# regal ignore:prefer-set-or-object-rule
removed_group_versions := {[e.group, e.version] | some e in kb.apis; e.removed}

# regal ignore:prefer-set-or-object-rule
removed_groups := {g | some [g, _] in removed_group_versions}

# stale_matches is the candidates the target no longer serves and no rule of the webhook
# still matches there, with what the target serves instead.
stale_matches(candidates, rules, t) := [{"label": c[0], "served": served} |
	some c in candidates
	versions.ordinal(t) >= c[1]
	not still_matched(rules, c[3], t)
	served := {apis.api_version(kb.apis[n]) | some k in c[2]; n := apis.successor(k, t)}
]

# METADATA
# description: |
#   Some rule names the resource (by name or *) in a group and at a version (each named or
#   *) where the knowledge base knows the target serves it. The group is any group serving
#   the resource, not the candidate's own: a resource that moved groups (Ingress, from
#   extensions to networking.k8s.io) is still matched by a rule naming its new group; a
#   group the knowledge base does not know serving it (a CRD's resource of the same name)
#   does not count.
still_matched(rules, b, t) if {
	some r in rules
	some res in object.get(r, "resources", [])
	base(res) in {b, "*"}
	some g in object.get(r, "apiGroups", [])
	some v in object.get(r, "apiVersions", [])
	some e in kb.apis
	e.resource == b
	g in {"*", e.group}
	v in {"*", e.version}
	apis.served(e, t)
}

served_phrase(stale) := sprintf(" The target serves them as %s.", [concat(", ", served)]) if {
	served := sort({x | some s in stale; some x in s.served})
	count(served) > 0
} else := ""

api_version("", v) := v

api_version(g, v) := sprintf("%s/%s", [g, v]) if g != ""

key(id, w) := sprintf("admission-webhook/%s/%s/%s/%s", [id, object.get(w.configuration, "kind", "WebhookConfiguration"), w.configuration.name, w.name])

configuration(w) := sprintf("%s %s", [object.get(w.configuration, "kind", "WebhookConfiguration"), w.configuration.name])

config_ref(w) := object.union({"kind": "WebhookConfiguration"}, w.configuration)

down_finding(w, stalls, t) := {
	"key": key("no-ready-endpoints", w),
	"category": "admission-webhook",
	"severity": down_severity(stalls),
	"target": t,
	"title": sprintf("%s: webhook %s fails closed and its service %s %s", [
		configuration(w), w.name, preflight.service_name(w.service), preflight.why_down(w.service),
	]),
	"detail": concat(" ", [
		"With failurePolicy Fail the API server rejects every request this webhook matches when it cannot call it,",
		"so those requests are rejected now.",
		down_consequence(stalls),
	]),
	"remediation": concat(" ", [
		"Bring the webhook's pods back (more than one replica, with a PodDisruptionBudget), or set failurePolicy: Ignore,",
		"or delete the configuration if nothing serves the webhook any more.",
	]),
	"objects": [config_ref(w), preflight.service_ref(w.service)],
	"namespaces": [w.service.namespace],
	"citations": [
		sprintf("%s#failure-policy", [docs]),
		sprintf("%s#avoiding-deadlocks-in-self-hosted-webhooks", [docs]),
		sprintf("%s#avoid-self-mutation", [good_practices]),
	],
}

# METADATA
# description: |
#   The groups whose requests the upgrade itself makes or waits on: "*"; the core group
#   (pods recreated off drained nodes and their evictions, nodes, events, service accounts,
#   config maps); apps, batch and policy (controllers' writes and status, budgets' status);
#   coordination.k8s.io (node and leader-election leases); rbac.authorization.k8s.io and
#   flowcontrol.apiserver.k8s.io (the defaults a new API server reconciles);
#   discovery.k8s.io (EndpointSlices of moved pods); apiextensions.k8s.io (add-ons' CRDs);
#   certificates.k8s.io (new nodes' kubelet CSRs); storage.k8s.io (CSINodes, volume
#   attachments of moved pods). Not admissionregistration.k8s.io: the API server never
#   calls webhooks for webhook configurations or admission policies (rules.go,
#   IsExemptAdmissionConfigurationResource).
upgrade_groups := {
	"*", "", "apps", "batch", "policy", "coordination.k8s.io", "rbac.authorization.k8s.io",
	"discovery.k8s.io", "apiextensions.k8s.io", "certificates.k8s.io", "storage.k8s.io",
	"flowcontrol.apiserver.k8s.io",
}

# The groups of upgrade_groups a webhook's rules name, sorted.
upgrade_groups_matched(w) := sort({g |
	some r in object.get(w, "rules", [])
	some g in object.get(r, "apiGroups", [])
	g in upgrade_groups
})

down_severity(stalls) := "blocker" if count(stalls) > 0

else := "warning"

down_consequence(stalls) := sprintf(
	concat(" ", [
		"Its rules name groups the upgrade writes or waits on (%s): as nodes are drained and replaced, the requests it",
		"matches there (pods recreated elsewhere, its own too if it matches them; leases, controllers' status, the",
		"control plane's defaults) are rejected until its service is back.",
	]),
	[concat(", ", [group_phrase(g) | some g in stalls])],
) if {
	count(stalls) > 0
} else := concat(" ", [
	"Its rules match only groups the upgrade neither writes nor waits on (a CRD's, say): it is broken today,",
	"but draining nodes and restarting the control plane do not stall on it.",
])

group_phrase("*") := "every group"

group_phrase("") := "the core group"

group_phrase(g) := g if not g in {"*", ""}
