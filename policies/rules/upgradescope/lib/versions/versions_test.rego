package upgradescope.lib.versions_test

import data.upgradescope.lib.versions

test_ordinal_of_plain_and_vendor_versions if {
	cases := {
		"1.36": 1036,
		"v1.36.2": 1036,
		"v1.33.1-eks-4096722": 1033,
		"v1.32.4-gke.1106000": 1032,
		"v1.31.5+k3s1": 1031,
		"v1.28.6+f1618d5": 1028,
	}
	every v, want in cases {
		versions.ordinal(v) == want
	}
}

test_ordinal_is_undefined_for_garbage if {
	not versions.ordinal("latest")
}

test_server_prefers_the_emulated_minor if {
	versions.server({"serverVersion": "v1.35.4", "emulatedVersion": "1.32"}) == 1032
	versions.server({"serverVersion": "v1.33.1-eks-4096722"}) == 1033
	not versions.server({})
}

test_minor_and_next if {
	versions.minor(1037) == "1.37"
	versions.next("1.36") == "1.37"
	versions.next("1.9") == "1.10"
}

test_cluster_is_the_server_ordinal_of_the_input_inventory if {
	versions.cluster == 1032 with input as {"inventory": {"serverVersion": "v1.35.4", "emulatedVersion": "1.32", "nodes": []}}
	versions.cluster == 1033 with input as {"inventory": {"serverVersion": "v1.33.1-eks-4096722"}}
	not versions.cluster with input as {"inventory": {}}
}
