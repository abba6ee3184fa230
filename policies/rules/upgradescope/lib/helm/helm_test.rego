package upgradescope.lib.helm_test

import data.upgradescope.lib.helm

releases := [{"name": "a", "chart": "x"}, {"name": "b", "chart": "y"}]

test_a_release_the_engine_converted_is_read_from_the_facts if {
	inp := {"inventory": {"helmReleases": releases}, "facts": {"helmReleases": {1: {"name": "from-facts"}}}}
	helm.release(1).name == "from-facts" with input as inp
}

test_a_release_missing_from_the_facts_is_read_from_the_whole_list if {
	inp := {"inventory": {"helmReleases": releases}, "facts": {"helmReleases": {1: releases[1]}}}
	helm.release(0) == releases[0] with input as inp
}

test_without_facts_every_release_is_read_from_the_whole_list if {
	helm.release(1) == releases[1] with input as {"inventory": {"helmReleases": releases}}
}

test_an_index_past_the_list_is_undefined if {
	not helm.release(2) with input as {"inventory": {"helmReleases": releases}, "facts": {"helmReleases": {}}}
}
