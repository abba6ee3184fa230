package upgradescope.rules.unknownapi_test

import data.upgradescope.rules.unknownapi

usage(group, version, kind) := {"group": group, "version": version, "kind": kind, "count": 1, "namespaces": {"x": 1}}

judge(u) := {f.key | some f in fs} if {
	fs := unknownapi.findings with input as {"inventory": {"apiUsage": [u]}, "targets": ["1.33"]}
}

test_an_unknown_version_of_a_builtin_group_is_info if {
	judge(usage("apps", "v1beta9", "Deployment")) == {"unknown-api/apps/v1beta9/Deployment"}
	judge(usage("", "v2", "Pod")) == {"unknown-api/core/v2/Pod"}
}

test_known_apis_and_custom_groups_are_silent if {
	judge(usage("apps", "v1", "Deployment")) == set()
	judge(usage("cert-manager.io", "v9", "Certificate")) == set()
}
