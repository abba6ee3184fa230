package upgradescope.lib.apis_test

import data.upgradescope.lib.apis

kb_apis := {
	"flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema": {
		"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta2", "kind": "FlowSchema",
		"introduced": "1.23", "deprecated": "1.26", "removed": "1.29",
		"replacement": "flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema",
	},
	"flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema": {
		"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "kind": "FlowSchema",
		"introduced": "1.26", "deprecated": "1.29", "removed": "1.32",
		"replacement": "flowcontrol.apiserver.k8s.io/v1/FlowSchema",
	},
	"flowcontrol.apiserver.k8s.io/v1/FlowSchema": {
		"group": "flowcontrol.apiserver.k8s.io", "version": "v1", "kind": "FlowSchema",
		"introduced": "1.29",
	},
}

kb_index := {
	"replacements": {
		"flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema": ["flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"],
		"flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema": ["flowcontrol.apiserver.k8s.io/v1/FlowSchema"],
		"flowcontrol.apiserver.k8s.io/v1/FlowSchema": [],
		"resource.k8s.io/v1beta2/ResourceClaim": [],
		"resource.k8s.io/v1/ResourceClaim": [],
	},
	"byGroupKind": {
		"flowcontrol.apiserver.k8s.io/FlowSchema": [
			"flowcontrol.apiserver.k8s.io/v1/FlowSchema",
			"flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema",
			"flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema",
		],
		"resource.k8s.io/ResourceClaim": ["resource.k8s.io/v1/ResourceClaim", "resource.k8s.io/v1beta2/ResourceClaim"],
	},
}

test_key_names_the_core_group if {
	apis.key("", "v1", "Pod") == "core/v1/Pod"
	apis.key("apps", "v1", "Deployment") == "apps/v1/Deployment"
}

test_api_version_omits_the_core_group if {
	apis.api_version({"group": "", "version": "v1"}) == "v1"
	apis.api_version({"group": "apps", "version": "v1"}) == "apps/v1"
}

test_served_between_introduction_and_removal if {
	e := kb_apis["flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"]
	not apis.served(e, "1.25")
	apis.served(e, "1.26")
	apis.served(e, "1.31")
	not apis.served(e, "1.32")
}

test_successor_follows_the_chain_and_prefers_undeprecated if {
	k := "flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema"
	apis.successor(k, "1.30") == "flowcontrol.apiserver.k8s.io/v1/FlowSchema" with data.upgradescope.kb.apis as kb_apis
		with data.upgradescope.kb.apiindex as kb_index
	got := apis.successor(k, "1.27") with data.upgradescope.kb.apis as kb_apis
		with data.upgradescope.kb.apiindex as kb_index
	got == "flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"
}

test_successor_undefined_when_nothing_is_served if {
	not apis.successor("flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema", "1.24") with data.upgradescope.kb.apis as kb_apis
		with data.upgradescope.kb.apiindex as kb_index
}

test_served_siblings_lists_other_versions if {
	k := "flowcontrol.apiserver.k8s.io/v1/FlowSchema"
	got := apis.served_siblings(k, "1.28") with data.upgradescope.kb.apis as kb_apis
		with data.upgradescope.kb.apiindex as kb_index
	got == ["flowcontrol.apiserver.k8s.io/v1beta2", "flowcontrol.apiserver.k8s.io/v1beta3"]
}

test_successor_falls_back_to_the_newest_served_version_of_the_kind if {
	siblings := {
		"resource.k8s.io/v1beta2/ResourceClaim": {
			"group": "resource.k8s.io", "version": "v1beta2", "kind": "ResourceClaim",
			"introduced": "1.33", "deprecated": "1.36", "removed": "1.39",
		},
		"resource.k8s.io/v1/ResourceClaim": {
			"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim",
			"introduced": "1.34",
		},
	}
	got := apis.successor("resource.k8s.io/v1beta2/ResourceClaim", "1.38") with data.upgradescope.kb.apis as siblings
		with data.upgradescope.kb.apiindex as kb_index
	got == "resource.k8s.io/v1/ResourceClaim"
}
