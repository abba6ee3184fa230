package upgradescope.rules.lifecycle_test

import data.upgradescope.rules.lifecycle

calendars := {
	"eks": {
		"id": "eks", "name": "Amazon EKS", "extendedSupportNote": "Billed per cluster-hour.",
		"citations": ["https://example.com/eks"],
		"pricing": {
			"currency": "USD", "standardPerClusterHour": 0.1, "extendedPerClusterHour": 0.6, "asOf": "2026-10-03",
			"citations": ["https://example.com/eks-pricing"],
		},
		"versions": {
			"1.30": {"minor": "1.30", "standardEnd": "2025-07-23", "extendedEnd": "2026-07-23"},
			"1.32": {"minor": "1.32", "standardEnd": "2026-03-23", "extendedEnd": "2027-03-23"},
			"1.34": {"minor": "1.34", "standardEnd": "2026-12-02", "extendedEnd": "2027-12-02"},
			"1.35": {"minor": "1.35", "standardEnd": "2027-03-27", "extendedEnd": "2028-03-27"},
			"1.20": {"minor": "1.20", "standardEnd": "2022-11-01"},
		},
	},
	"aks": {
		"id": "aks", "name": "Azure Kubernetes Service", "extendedSupportNote": "No automatic extended support.",
		"citations": ["https://example.com/aks"],
		"versions": {"1.32": {"minor": "1.32", "standardEnd": "2026-03-31", "extendedEnd": "2027-03-31"}},
	},
}

judge(provider, server) := fs if {
	fs := lifecycle.findings with input as {
		"inventory": {"provider": provider, "serverVersion": server}, "targets": ["1.36"],
		"now": "2026-11-29T12:00:00Z",
	}
		with data.upgradescope.kb.providers as calendars
		with data.upgradescope.kb.skew.approachingDays as 90
}

test_a_minor_in_extended_support_is_a_blocker_with_its_price if {
	fs := judge("eks", "v1.32.9-eks-1a2b3c4")
	count(fs) == 1
	some f in fs
	f.key == "support-lifecycle/eks/1.32/extended"
	f.severity == "blocker"
	f.target == "1.36"
	f.title == "Amazon EKS 1.32: standard support ended on 2026-03-23; extended support ends on 2027-03-23"
	startswith(f.detail, concat(" ", [
		"Extended support lists at USD 0.6 per cluster-hour against 0.1 in standard support:",
		"USD 4380 more per cluster per year (list price as of 2026-10-03).",
	]))
	f.citations == ["https://example.com/eks", "https://example.com/eks-pricing"]
}

test_standard_support_ending_within_the_window_is_a_warning if {
	some f in judge("eks", "v1.34.2-eks-1")
	f.key == "support-lifecycle/eks/1.34/ending"
	f.severity == "warning"
	f.title == "Amazon EKS 1.34: standard support ends on 2026-12-02"
}

test_extended_support_over_is_ended if {
	some f in judge("eks", "v1.30.1-eks-1")
	f.key == "support-lifecycle/eks/1.30/ended"
	f.title == "Amazon EKS 1.30: extended support ended on 2026-07-23"
	f.detail == "Billed per cluster-hour."
}

test_a_minor_without_extended_support_ends_with_standard if {
	some f in judge("eks", "v1.20.15-eks-1")
	f.key == "support-lifecycle/eks/1.20/ended"
	f.title == "Amazon EKS 1.20: standard support ended on 2022-11-01"
}

test_a_provider_without_a_price_says_only_its_note if {
	some f in judge("aks", "v1.32.7")
	f.key == "support-lifecycle/aks/1.32/extended"
	f.detail == "No automatic extended support."
	f.citations == ["https://example.com/aks"]
}

test_standard_support_far_ahead_other_providers_and_unlisted_minors_are_silent if {
	count(judge("eks", "v1.35.0-eks-1")) == 0
	count(judge("other", "v1.32.0")) == 0
	count(judge("", "v1.32.0")) == 0
	count(judge("aks", "v1.29.0")) == 0
}

test_a_target_already_past_standard_support_is_a_warning if {
	fs := lifecycle.findings with input as {
		"inventory": {"provider": "eks", "serverVersion": "v1.30.1-eks-1"}, "targets": ["1.32", "1.35"],
		"now": "2026-11-29T12:00:00Z",
	}
		with data.upgradescope.kb.providers as calendars
		with data.upgradescope.kb.skew.approachingDays as 90
	keys := {[f.key, f.target, f.severity] | some f in fs}
	keys == {
		["support-lifecycle/eks/1.30/ended", "1.32", "blocker"],
		["support-lifecycle/eks/1.30/ended", "1.35", "blocker"],
		["support-lifecycle/eks/1.32/target-extended", "1.32", "warning"],
	}
	some f in fs
	f.key == "support-lifecycle/eks/1.32/target-extended"
	f.title == "Amazon EKS 1.32 left standard support on 2026-03-23: upgrading to it lands in extended support (until 2027-03-23)"
}
