package upgradescope.rules.rehearsal_test

import data.upgradescope.rules.rehearsal

judge(section, targets) := fs if {
	fs := rehearsal.findings with input as {
		"inventory": {"source": "files", "rehearsal": section},
		"targets": targets,
	}
}

only(fs) := f if {
	count(fs) == 1
	some f in fs
}

section(rejections) := {
	"target": "1.35", "serverVersion": "v1.35.4", "server": "kube-binaries",
	"objects": 3, "accepted": 2, "rejections": rejections,
}

mismatched := {
	"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web",
	"source": {"file": "deploy/web.yaml", "line": 12},
	"reason": "Invalid",
	"message": "Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`",
	"fieldManager": "upgradescope-rehearsal",
}

test_a_refused_object_is_a_blocker_naming_it_its_file_and_line_and_the_servers_message if {
	f := only(judge(section([mismatched]), ["1.35"]))
	f.key == "rehearsal/rejected/Deployment/shop/web"
	f.category == "rehearsal"
	f.severity == "blocker"
	f.target == "1.35"
	f.title == "Deployment shop/web (deploy/web.yaml:12): the 1.35 API server refuses it: Invalid"
	contains(f.detail, "the API server v1.35.4 answered Invalid: Deployment.apps \"web\" is invalid")
	f.objects == [{"kind": "Deployment", "namespace": "shop", "name": "web", "file": "deploy/web.yaml", "line": 12}]
	f.namespaces == ["shop"]
}

test_a_refusal_is_judged_only_at_the_rehearsals_target if {
	count(judge(section([mismatched]), ["1.36"])) == 0
	f := only(judge(section([mismatched]), ["1.35", "1.36"]))
	f.target == "1.35"
}

test_no_rehearsal_or_no_refusal_has_no_finding if {
	count(rehearsal.findings) == 0 with input as {"inventory": {"source": "files"}, "targets": ["1.35"]}
	count(judge(section([]), ["1.35"])) == 0
}

test_a_converted_object_says_what_it_was_converted_from if {
	r := object.union(mismatched, {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "originalApiVersion": "extensions/v1beta1"})
	f := only(judge(section([r]), ["1.35"]))
	contains(f.detail, "Applied at networking.k8s.io/v1 with server-side apply and dryRun=All (converted from extensions/v1beta1 by upgradescope fix)")
}

sources := [
	{"source": {"file": "a.yaml", "line": 3}, "want": "a.yaml:3"},
	{"source": {"file": "a.yaml"}, "want": "a.yaml"},
	{"source": {"helmRelease": "web/shop"}, "want": "Helm release web/shop"},
	{"source": {"application": "argocd/shop"}, "want": "Argo CD application argocd/shop"},
	{"source": {"live": true}, "want": "live"},
	{"source": {}, "want": "unknown source"},
]

test_the_title_names_every_kind_of_source if {
	every c in sources {
		r := object.union(object.remove(mismatched, ["source"]), {"source": c.source})
		f := only(judge(section([r]), ["1.35"]))
		contains(f.title, sprintf("(%s)", [c.want]))
	}
}

test_a_cluster_scoped_object_is_named_without_a_namespace if {
	r := {
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader",
		"source": {"live": true}, "reason": "Invalid", "message": "rules[0].verbs: Required value",
	}
	f := only(judge(section([r]), ["1.35"]))
	f.key == "rehearsal/rejected/ClusterRole/reader"
	f.objects == [{"kind": "ClusterRole", "name": "reader"}]
	f.namespaces == []
}
