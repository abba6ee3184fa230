package upgradescope.custom.teamlabel_test

import data.upgradescope.custom.teamlabel

findings_for(namespaces) := fs if {
	fs := teamlabel.findings with input as {"inventory": {"namespaces": namespaces}, "targets": ["1.37"]}
}

test_a_namespace_without_a_team_is_a_warning if {
	findings_for([{"name": "web"}, {"name": "db", "team": "data"}]) == {{
		"key": "team-label/web", "category": "team-label", "severity": "warning", "target": "1.37",
		"title": "Namespace web has no team", "remediation": "Label the namespace with its owning team.",
		"objects": [], "namespaces": ["web"], "citations": [],
	}}
}

test_namespaces_with_teams_are_fine if {
	findings_for([{"name": "db", "team": "data"}]) == set()
}

test_no_namespaces_at_all_is_a_warning if {
	[f.key | some f in findings_for([])] == ["team-label/no-namespaces"]
}
