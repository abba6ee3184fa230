package upgradescope.rules.crds_test

import data.upgradescope.rules.crds

crd := {
	"group": "cert-manager.io", "kind": "Certificate",
	"versions": [
		{"name": "v1alpha2", "served": false, "storage": false},
		{"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "deprecationWarning": "use v1"},
		{"name": "v1alpha3", "served": true, "storage": false, "deprecated": true},
		{"name": "v1", "served": true, "storage": true},
	],
	"storedVersions": ["v1alpha2", "v1"],
	"usage": [
		{"version": "v1alpha2", "count": 2, "namespaces": {"shop": 2}, "objects": [{"namespace": "shop", "name": "a"}]},
		{"version": "v1beta1", "count": 1, "namespaces": {"shop": 1}},
		{"version": "v1", "count": 5, "namespaces": {"shop": 5}},
	],
}

judge(c) := {[f.key, f.severity] | some f in fs} if {
	fs := crds.findings with input as {"inventory": {"crds": [c]}, "targets": ["1.33"]}
}

test_each_crd_version_rule if {
	judge(crd) == {
		["crd-version/unserved/cert-manager.io/v1alpha2/Certificate", "blocker"],
		["crd-version/deprecated/cert-manager.io/v1beta1/Certificate", "warning"],
		["crd-version/stored-unserved/cert-manager.io/v1alpha2/Certificate", "warning"],
		["crd-version/deprecated-unused", "info"],
	}
}

test_deprecated_versions_nobody_uses_are_one_info_finding_naming_each_crd if {
	other := {"group": "acme.io", "kind": "Order", "plural": "orders", "versions": [
		{"name": "v1", "served": true, "storage": true},
		{"name": "v1beta1", "served": true, "storage": false, "deprecated": true},
	]}
	fs := crds.findings with input as {"inventory": {"crds": [crd, other]}, "targets": ["1.33"]}
	some f in fs
	f.key == "crd-version/deprecated-unused"
	f.title == "2 deprecated CRD version(s) that no object uses"
	f.detail == "acme.io/v1beta1 Order, cert-manager.io/v1alpha3 Certificate"
	f.objects == [{"name": "orders.acme.io"}, {"name": "certificate.cert-manager.io"}]
	f.objectsOmitted == 0
}

test_the_unused_list_names_ten_and_counts_the_rest if {
	many := [{"group": "x.io", "kind": sprintf("K%02d", [i]), "plural": sprintf("k%02ds", [i]), "versions": [
		{"name": "v1", "served": true, "storage": true},
		{"name": "v1beta1", "served": true, "deprecated": true},
	]} |
		some i in numbers.range(1, 12)
	]
	fs := crds.findings with input as {"inventory": {"crds": many}, "targets": ["1.33"]}
	some f in fs
	f.key == "crd-version/deprecated-unused"
	endswith(f.detail, "x.io/v1beta1 K10, and 2 more")
	count(f.objects) == 12
}

test_a_deprecated_version_quotes_the_crd_warning if {
	fs := crds.findings with input as {"inventory": {"crds": [crd]}, "targets": ["1.33"]}
	some f in fs
	f.key == "crd-version/deprecated/cert-manager.io/v1beta1/Certificate"
	f.detail == "The CRD says: \"use v1\""
}

test_a_clean_crd_is_silent if {
	clean := {
		"group": "x.io", "kind": "Y", "versions": [{"name": "v1", "served": true, "storage": true}],
		"storedVersions": ["v1"], "usage": [{"version": "v1", "count": 1, "namespaces": {}}],
	}
	judge(clean) == set()
}
