# METADATA
# title: Managed Kubernetes support lifecycle
# description: |
#   An EKS, GKE or AKS cluster whose minor has left the provider's standard support runs in
#   extended support (billed per cluster-hour, or AKS's reduced platform support) or past it,
#   as the provider's calendar in the knowledge base says. Judged on the scan clock, whatever
#   the target: a blocker once standard support has ended, a warning when it ends within the
#   approaching window. A minor the calendar does not list gets no finding.
# related_resources:
#   - ref: https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
#   - ref: https://docs.cloud.google.com/kubernetes-engine/docs/release-schedule
#   - ref: https://learn.microsoft.com/en-us/azure/aks/supported-kubernetes-versions
# custom:
#   category: support-lifecycle
package upgradescope.rules.lifecycle

import data.upgradescope.kb
import data.upgradescope.lib.versions

today := substring(input.now, 0, 10)

window_end := time.format([time.add_date(time.parse_rfc3339_ns(input.now), 0, 0, kb.skew.approachingDays), "UTC", "2006-01-02"])

provider := kb.providers[input.inventory.provider]

minor := versions.minor(versions.cluster)

row := provider.versions[minor]

phase := phase_of(row)

# The phase of a minor today; undefined while standard support has more than the approaching
# window left.
phase_of(r) := "ended" if {
	r.extendedEnd <= today
} else := "ended" if {
	not r.extendedEnd
	r.standardEnd <= today
} else := "extended" if {
	r.standardEnd <= today
} else := "ending" if {
	r.standardEnd <= window_end
}

severity := {"ending": "warning", "extended": "blocker", "ended": "blocker"}

# METADATA
# description: |
#   One finding per target for the cluster's minor past, or near, standard support, and one
#   for each target minor the provider has already moved out of it.
# scope: document

# METADATA
# custom:
#   families:
#     - id: provider-support-lifecycle
#       title: Managed clusters past, or near, the end of standard support
#       category: support-lifecycle
#       reads: [inventory.provider, inventory.serverVersion]
#       capabilities: [versions]
#       modes: [cluster]
#       severity: >-
#         blocker when the cluster's minor has left the provider's standard support (extended support, or
#         none); warning when standard support ends within 90 days, or when a target minor has already
#         left it. Judged on the scan's clock; a minor the calendar does not list gets no finding.
#       citations:
#         - https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
#         - https://docs.cloud.google.com/kubernetes-engine/docs/release-schedule
#         - https://learn.microsoft.com/en-us/azure/aks/supported-kubernetes-versions
findings contains f if {
	some t in input.targets
	f := {
		"key": sprintf("support-lifecycle/%s/%s/%s", [provider.id, minor, phase]),
		"category": "support-lifecycle",
		"severity": severity[phase],
		"target": t,
		"title": title,
		"detail": detail,
		"remediation": sprintf("Upgrade the control plane to a minor in %s standard support, one minor at a time.", [provider.name]),
		"objects": [],
		"namespaces": [],
		"citations": citations,
	}
}

# A target the provider has already moved out of standard support: an upgrade to it lands in
# extended support (or none), so the plan should go further.
# METADATA
# custom:
#   families: [{id: provider-support-lifecycle}]
findings contains f if {
	some t in input.targets
	t != minor
	r := provider.versions[t]
	p := phase_of(r)
	p in {"extended", "ended"}
	f := {
		"key": sprintf("support-lifecycle/%s/%s/target-%s", [provider.id, t, p]),
		"category": "support-lifecycle",
		"severity": "warning",
		"target": t,
		"title": target_title(t, r, p),
		"detail": provider.extendedSupportNote,
		"remediation": sprintf("Plan the upgrade past %s, to a minor still in %s standard support.", [t, provider.name]),
		"objects": [],
		"namespaces": [],
		"citations": provider.citations,
	}
}

target_title(t, r, "extended") := sprintf("%s %s left standard support on %s: upgrading to it lands in extended support (until %s)", [
	provider.name, t, r.standardEnd, r.extendedEnd,
])

target_title(t, _, "ended") := sprintf("%s %s is past the end of its support: upgrading to it lands in an unsupported minor", [provider.name, t])

title := sprintf("%s %s: standard support ends on %s", [provider.name, minor, row.standardEnd]) if phase == "ending"

title := sprintf("%s %s: standard support ended on %s; extended support ends on %s", [
	provider.name, minor, row.standardEnd, row.extendedEnd,
]) if phase == "extended"

title := sprintf("%s %s: extended support ended on %s", [provider.name, minor, row.extendedEnd]) if {
	phase == "ended"
	row.extendedEnd
}

title := sprintf("%s %s: standard support ended on %s", [provider.name, minor, row.standardEnd]) if {
	phase == "ended"
	not row.extendedEnd
}

detail := concat(" ", [s | some s in [cost_text, provider.extendedSupportNote]; s != ""])

# The extra list price of a year in extended support: (extended − standard) × 8,760 hours.
default cost_text := ""

cost_text := sprintf(cost_template, [
	p.currency, p.extendedPerClusterHour, p.standardPerClusterHour,
	p.currency, format_int(round((p.extendedPerClusterHour - p.standardPerClusterHour) * 8760), 10),
	p.asOf, price_note(p),
]) if {
	phase in {"ending", "extended"}
	p := provider.pricing
}

cost_template := concat(" ", [
	"Extended support lists at %s %v per cluster-hour against %v in standard support:",
	"%s %s more per cluster per year (list price as of %s%s).",
])

price_note(p) := sprintf("; %s", [p.note]) if p.note

else := ""

citations := array.concat(provider.citations, object.get(provider, ["pricing", "citations"], [])) if {
	cost_text != ""
} else := provider.citations
