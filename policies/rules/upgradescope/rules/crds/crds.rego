# METADATA
# title: CustomResourceDefinition versions
# description: |
#   Custom resources at a version their CRD no longer serves cannot be read or written
#   (blocker, whatever the target); written through a version the CRD deprecates (warning,
#   quoting its deprecationWarning); storedVersions that are no longer served need a storage
#   migration before the CRD can drop them (warning); a deprecated version nobody uses is info.
# related_resources:
#   - ref: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
# custom:
#   category: crd-version
package upgradescope.rules.crds

versioning := "https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/"

# METADATA
# description: CRD version findings, the same for every target.
# scope: document

# METADATA
# custom:
#   families:
#     - id: crd-versions
#       title: Custom resources at versions their CRD no longer serves or deprecates
#       category: crd-version
#       reads: [inventory.crds, facts.crds]
#       capabilities: [crds]
#       modes: [files, cluster]
#       severity: >-
#         blocker when objects are stored at a version the CRD does not serve; warning when objects use a
#         deprecated served version, or storedVersions lists a version no longer served (a storage
#         migration is due); info for deprecated versions no object uses. The same for every target.
#       citations:
#         - https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
findings contains f if {
	some i in judged
	c := input.inventory.crds[i]
	some u in c.usage
	not served[[i, u.version]]
	some t in input.targets
	title := sprintf("%s/%s %s: %s stored at a version the CRD does not serve", [c.group, u.version, c.kind, objects(u.count)])
	remediation := "Serve the version again, or migrate the objects to a served version before upgrading the operator that owns the CRD."
	f := finding(c, u, "unserved", "blocker", t, title, remediation)
}

# METADATA
# custom:
#   families: [{id: crd-versions}]
findings contains f if {
	some i in judged
	c := input.inventory.crds[i]
	some u in c.usage
	some v in c.versions
	v.name == u.version
	v.served
	v.deprecated
	some t in input.targets
	title := sprintf("%s/%s %s is deprecated and still used (%s)", [c.group, u.version, c.kind, objects(u.count)])
	f := object.union(finding(c, u, "deprecated", "warning", t, title, "Rewrite these objects at the CRD's storage version."), {"detail": warning_text(v)})
}

# METADATA
# custom:
#   families: [{id: crd-versions}]
findings contains f if {
	some i in judged
	c := input.inventory.crds[i]
	some stored in c.storedVersions
	not served[[i, stored]]
	some t in input.targets
	title := sprintf("%s/%s %s is in storedVersions but no longer served", [c.group, stored, c.kind])
	u := {"version": stored, "count": 0, "namespaces": {}}
	f := finding(c, u, "stored-unserved", "warning", t, title, "Run a storage version migration, then remove the version from status.storedVersions.")
}

# Deprecated versions nobody uses need no migration: they are one info finding per target,
# listing the CRDs (a repository can hold hundreds, and a finding each drowned the report and
# cost more than every other rule together). Each CRD is an object of the finding, so a
# suppression can still name one.
# METADATA
# custom:
#   families: [{id: crd-versions}]
findings contains f if {
	count(unused_deprecated) > 0
	some t in input.targets
	n := count(unused_deprecated)
	f := {
		"key": "crd-version/deprecated-unused",
		"category": "crd-version",
		"severity": "info",
		"target": t,
		"title": sprintf("%d deprecated CRD version(s) that no object uses", [n]),
		"detail": concat(", ", array.concat(
			[u.label | some u in array.slice(unused_deprecated, 0, 10)],
			[sprintf("and %d more", [n - 10]) | n > 10],
		)),
		"remediation": "Nothing to migrate; the operator that owns each CRD removes the version in a later release.",
		"objects": [{"name": u.name} | some u in array.slice(unused_deprecated, 0, 100)],
		"objectsOmitted": max({0, n - 100}),
		"citations": [versioning],
	}
}

# The unused deprecated versions, sorted: [{name: the CRD's name, label: group/version Kind}].
unused_deprecated := [x[1] | some x in sort([[label, {"name": crd_name(c), "label": label}] |
	some i in judged
	c := input.inventory.crds[i]
	some v in c.versions
	v.deprecated
	not used[[i, v.name]]
	label := concat("", [c.group, "/", v.name, " ", c.kind])
])]

crd_name(c) := concat(".", [c.plural, c.group]) if object.get(c, "plural", "") != ""

else := concat(".", [lower(c.kind), c.group])

# The CRDs a finding may be about, by index. The engine lists them in input.facts.crds,
# leaving out the many with no deprecated version and nothing used or stored at a version
# they do not serve; without that fact, every CRD.
judged := listed if {
	listed := input.facts.crds
} else := [i | some i, _ in object.get(input.inventory, "crds", [])]

# [index of the CRD, version] of each version a CRD serves, and of each version its objects
# are stored or written at: built once as whole sets and looked up per row, where a function
# per row (OPA keys its call cache by the whole CRD) cost more than the walk it saved. Sets
# built by comprehension, not partial rules: OPA evaluates a partial rule's body again for
# each key it is asked about.
served := {[i, v.name] | # regal ignore:prefer-set-or-object-rule
	some i in judged
	c := input.inventory.crds[i]
	some v in c.versions
	v.served
}

used := {[i, u.version] | # regal ignore:prefer-set-or-object-rule
	some i in judged
	c := input.inventory.crds[i]
	some u in c.usage
}

warning_text(v) := sprintf("The CRD says: %q", [v.deprecationWarning]) if {
	object.get(v, "deprecationWarning", "") != ""
} else := "The CRD marks this version deprecated."

objects(1) := "1 object"

objects(n) := sprintf("%d objects", [n]) if n != 1

finding(c, u, kind, severity, t, title, remediation) := {
	"key": sprintf("crd-version/%s/%s/%s/%s", [kind, c.group, u.version, c.kind]),
	"category": "crd-version",
	"severity": severity,
	"target": t,
	"title": title,
	"detail": "",
	"remediation": remediation,
	"objects": object.get(u, "objects", []),
	"objectsOmitted": object.get(u, "objectsOmitted", 0),
	"namespaces": sort(object.keys(u.namespaces) - {""}),
	"citations": [versioning],
}
