# Add-on detection: which add-ons the inventory's evidence shows. Images of pod templates
# (normalised, mirrors matched by path), recommended labels of rebuilt images, Helm release
# charts and IngressClass controllers are matched against the registry in
# data.upgradescope.kb.addons, so a new registry re-judges an old inventory.
package upgradescope.rules.addons

import data.upgradescope.kb
import data.upgradescope.lib.helm
import data.upgradescope.lib.images

# The image versions an add-on matcher could claim, by reference: the engine picks them from
# input.inventory.workloadImages (one index lookup per path segment: a segment some matcher
# starts with, or a name label the registry lists) into input.facts.images, in the same
# shape, so an image no matcher can claim costs the rules nothing.
candidates := {images.reference(w.repository, v): v | # regal ignore:prefer-set-or-object-rule
	some w in object.get(object.get(input, "facts", {}), "images", [])
	some v in w.versions
}

# Each candidate reference, parsed once.
parsed := {ref: images.parse(ref) | some ref, _ in candidates} # regal ignore:prefer-set-or-object-rule

# Every (image, add-on, tag glob) an image matcher claims.
image_claims contains [ref, c.id, c.tag] if {
	some ref, _ in candidates
	p := parsed[ref]
	some run in images.segment_runs(p.path)
	some c in kb.addonindex.imagePaths[run]
	tag_matches(c.tag, p.tag)
}

tag_matches("", _)

tag_matches(pattern, tag) if {
	pattern != ""
	glob.match(pattern, ["/"], tag)
}

# A claim with a tag glob is more specific: it takes the image from plain claims. The claims
# are sorted by image once, so each image's are one run: gathering them by a walk over every
# claim per image was quadratic in the versions of one add-on. The runs are found inline, not
# by functions given the sorted claims: OPA caches each call by its arguments, and comparing
# a cached argument of 10,000 claims on every call was quadratic again.
claims := {sorted[first][0]: claims_in(array.slice(sorted, first, ends[k])) | # regal ignore:prefer-set-or-object-rule
	sorted := sort(image_claims)
	starts := array.concat([0], [j | some j, c in sorted; j > 0; sorted[j - 1][0] != c[0]])
	ends := array.concat(array.slice(starts, 1, count(starts)), [count(sorted)])
	some k, first in starts
}

claims_in(run) := {c[1] | some c in run; c[2] != ""} if {
	some c in run
	c[2] != ""
} else := {c[1] | some c in run}

# METADATA
# description: |
#   Detections, each {id, version, namespaces, objects, objectsOmitted, source, evidence}:
#   objects are the workloads running a detected image version, as the inventory names them.
# scope: document
detections contains image_detection(id, image_version(ref, v), v, "image", ref) if {
	some ref, v in candidates
	some id in claims[ref]
}

detections contains image_detection(id, label_version(labels), v, "labels", name) if {
	some ref, v in candidates
	some labels in object.get(v, "labelSets", [])
	name := labels["app.kubernetes.io/name"]
	some id in kb.addonindex.labels[name]
	not claims[ref]
}

# One detection per chart and version, naming every namespace a live release of it is in: a
# chart installed in every namespace would otherwise be hundreds of detections, each walked
# again by the passes below.
detections contains object.union(unnamed, {"id": id, "version": version, "namespaces": namespaces, "source": "helm", "evidence": chart}) if {
	some chart, ids in kb.addonindex.charts
	releases := [[chart_version(r), r.namespace] |
		some i in input.facts.helmChartIndex[chart]
		r := helm.release(i)
		not r.status in {"uninstalled", "uninstalling"}
	]
	some version in {v | some [v, _] in releases}
	namespaces := sort({ns | some [v, ns] in releases; v == version})
	some id in ids
}

detections contains object.union(unnamed, {"id": id, "version": "", "namespaces": [], "source": "ingressclass", "evidence": c.controller}) if {
	some c in input.inventory.ingressClasses
	some id in kb.addonindex.ingressControllers[c.controller]
}

# A chart an Argo CD Application or Flux HelmRelease declares is an install in the namespace the
# chart deploys into. It carries no application version: that comes from the pods.
detections contains object.union(unnamed, {"id": id, "version": "", "namespaces": [c.targetNamespace], "source": "gitops", "evidence": gitops_evidence(c)}) if {
	some c in input.inventory.gitopsCharts
	some id in kb.addonindex.charts[c.chart]
}

# A node's container runtime (containerRuntimeVersion "containerd://1.7.24") is an install on
# the nodes that run it; node groups arrive grouped by runtime, so each group is one detection.
detections contains object.union(unnamed, {"id": id, "version": version, "namespaces": [], "source": "node", "evidence": runtime_evidence(g)}) if {
	some g in object.get(input.inventory, "nodes", [])
	parts := split(object.get(g, "containerRuntime", ""), "://")
	count(parts) == 2
	some id in kb.addonindex.runtimes[parts[0]]
	version := images.tag_version(parts[1])
}

image_detection(id, version, v, source, evidence) := {
	"id": id, "version": version, "namespaces": v.namespaces, "source": source, "evidence": evidence,
	"objects": object.get(v, "objects", []), "objectsOmitted": object.get(v, "objectsOmitted", 0),
}

# Evidence that names no workload: a chart, a controller, a node group.
unnamed := {"objects": [], "objectsOmitted": 0}

runtime_evidence(g) := sprintf("%d node(s) with %s: %s", [g.count, g.containerRuntime, concat(", ", node_names(g))])

node_names(g) := array.concat(array.slice(g.names, 0, 3), ["…"]) if {
	count(g.names) > 3
} else := g.names

# The chart version is what the author asked for: shown only when it is one version. Where a
# Helm release in the chart's namespace records the real one, the release's detection covers
# the namespace and this one gives way (see covered_by_strong).
gitops_evidence(c) := sprintf("%s %s/%s: chart %s %s", [c.tool, c.namespace, c.name, c.chart, c.version]) if {
	c.versionKind == "exact"
} else := sprintf("%s %s/%s: chart %s", [c.tool, c.namespace, c.name, c.chart])

image_version(ref, v) := version if {
	version := images.tag_version(parsed[ref].tag)
} else := version if {
	versions := {label_version(l) | some l in object.get(v, "labelSets", [])} - {""}
	count(versions) == 1
	some version in versions
} else := ""

label_version(labels) := images.tag_version(labels["app.kubernetes.io/version"]) if {
	labels["app.kubernetes.io/version"]
} else := ""

chart_version(r) := images.tag_version(r.appVersion) if r.appVersion

else := ""

strong := {"image", "helm", "node"}

# A weak detection (labels, IngressClass) gives way to an add-on that supersedes it, such
# as a vendor's build of ingress-nginx found by its image, and to a strong detection of the
# same add-on, which knows its version.
#
# Built once as sets: asked per weak detection, a walk over every detection was quadratic in
# the versions of one add-on.
superseded(id) if id in superseded_by_strong

superseded(id) if id in strong_ids

superseded_by_strong contains id if {
	some d in detections
	d.source in strong
	some id in object.get(kb.addons[d.id], "supersedes", [])
}

strong_ids contains d.id if {
	some d in detections
	d.source in strong
}

strong_namespaces contains [d.id, ns] if {
	some d in detections
	d.source in strong
	some ns in d.namespaces
}

kept contains d if {
	some d in detections
	d.source in strong
}

kept contains d if {
	some d in detections
	not d.source in strong
	d.source != "gitops"
	not superseded(d.id)
}

# A chart source gives way only where a strong detection already covers its namespace: a chart
# deployed into another namespace is another install.
kept contains d if {
	some d in detections
	d.source == "gitops"
	not covered_by_strong(d)
}

covered_by_strong(d) if {
	some ns in d.namespaces
	[d.id, ns] in strong_namespaces
}

covered_by_strong(d) if d.id in superseded_by_strong

# METADATA
# description: |
#   Installs, one per add-on and version, with namespaces, sources and the workloads running
#   it merged. The detections are sorted by add-on and version once, so each install's are
#   one run: gathering them by a walk over every detection per install, and adding them to a
#   partial object rule (OPA checks each new key against every earlier one), took minutes
#   at 5,000 versions of one add-on.
installs := {key: install(key, [x[2] | some x in array.slice(grouped, first, ends[k])]) | # regal ignore:prefer-set-or-object-rule
	grouped := sort([[d.id, d.version, d] | some d in kept])
	starts := array.concat([0], [j | some j, g in grouped; j > 0; array.slice(grouped[j - 1], 0, 2) != array.slice(g, 0, 2)])
	ends := array.concat(array.slice(starts, 1, count(starts)), [count(grouped)])
	some k, first in starts
	key := [grouped[first][0], grouped[first][1]]
}

install([id, version], ds) := {
	"id": id,
	"version": version,
	"namespaces": sort({ns | some d in ds; some ns in d.namespaces}),
	"sources": sort({d.source | some d in ds}),
	"evidence": sort({d.evidence | some d in ds}),
	"objects": sort({o | some d in ds; some o in d.objects}),
	"objectsOmitted": sum([d.objectsOmitted | some d in ds]),
}
