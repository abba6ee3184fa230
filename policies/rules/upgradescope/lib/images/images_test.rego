package upgradescope.lib.images_test

import data.upgradescope.lib.images

test_parse_normalises_references if {
	cases := {
		"nginx": {"registry": "docker.io", "path": "library/nginx", "tag": "", "digest": ""},
		"nginx:1.25": {"registry": "docker.io", "path": "library/nginx", "tag": "1.25", "digest": ""},
		"docker.io/library/traefik:v2.10": {"registry": "docker.io", "path": "library/traefik", "tag": "v2.10", "digest": ""},
		"index.docker.io/calico/node:v3.26.1": {"registry": "docker.io", "path": "calico/node", "tag": "v3.26.1", "digest": ""},
		"registry.k8s.io/ingress-nginx/controller:v1.9.4@sha256:abc123": {
			"registry": "registry.k8s.io", "path": "ingress-nginx/controller", "tag": "v1.9.4", "digest": "sha256:abc123",
		},
		"localhost:5000/team/app@sha256:00ff": {"registry": "localhost:5000", "path": "team/app", "tag": "", "digest": "sha256:00ff"},
		"Quay.io/Jetstack/cert-manager-controller:v1.13.2": {
			"registry": "quay.io", "path": "jetstack/cert-manager-controller", "tag": "v1.13.2", "digest": "",
		},
	}
	every ref, want in cases {
		images.parse(ref) == want
	}
}

test_segment_runs_find_mirrored_paths if {
	images.segment_runs("mirror/ingress-nginx/controller") == {
		"mirror", "ingress-nginx", "controller",
		"mirror/ingress-nginx", "ingress-nginx/controller",
		"mirror/ingress-nginx/controller",
	}
}

test_tag_version if {
	images.tag_version("v1.9.4") == "1.9.4"
	images.tag_version("2.1") == "2.1.0"
	images.tag_version("v1.12.6-hardened1") == "1.12.6"
	not images.tag_version("latest")
	not images.tag_version("")
	images.line("1.9.4") == "1.9"
}

test_reference_spells_repository_tag_and_digest if {
	images.reference("nginx", {"tag": "1.25"}) == "nginx:1.25"
	images.reference("localhost:5000/team/app", {"digest": "sha256:00ff"}) == "localhost:5000/team/app@sha256:00ff"
	images.reference("a/b", {"tag": "v1", "digest": "sha256:1"}) == "a/b:v1@sha256:1"
	images.reference("a/b", {"namespaces": []}) == "a/b"
}
