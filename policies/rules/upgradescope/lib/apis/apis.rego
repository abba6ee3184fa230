# METADATA
# title: API lifecycle lookups
# description: |
#   Looks API lifecycle entries up by key (`<group or core>/<version>/<Kind>`) and answers
#   whether a Kubernetes minor serves them and what replaces them.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
package upgradescope.lib.apis

import data.upgradescope.kb
import data.upgradescope.lib.versions

# METADATA
# description: The knowledge-base key of a group, version and kind.
key(group, version, kind) := sprintf("%s/%s/%s", [group_name(group), version, kind])

group_name("") := "core"

group_name(group) := group if group != ""

# METADATA
# description: The apiVersion a manifest would write for an entry.
# scope: document
api_version(e) := e.version if e.group == ""

api_version(e) := sprintf("%s/%s", [e.group, e.version]) if e.group != ""

# METADATA
# description: True when the entry is removed at or before the target.
removed_by(e, target) if versions.ordinal(e.removed) <= versions.ordinal(target)

# METADATA
# description: True when the entry is deprecated at or before the target.
deprecated_by(e, target) if versions.ordinal(e.deprecated) <= versions.ordinal(target)

# METADATA
# description: True when the target serves the entry for the first time later than the target.
not_yet_served(e, target) if versions.ordinal(e.introduced) > versions.ordinal(target)

# METADATA
# description: True when the target serves the entry.
served(e, target) if {
	not not_yet_served(e, target)
	not removed_by(e, target)
}

# The replacement graph, every entry a node (graph.reachable drops edges into non-keys).
replacements := kb.apiindex.replacements

# The indexes are generated with the data (tools/genkb), so no evaluation groups it.
by_group_kind := kb.apiindex.byGroupKind

# METADATA
# description: Entries by the resource the apiserver serves them at ("<group or core>/<version>/<resource>").
by_resource := kb.apiindex.byResource

# METADATA
# description: |
#   The entry a user should move to from key k so the target serves it: the replacement
#   chain is followed, and an API the target does not deprecate is preferred. Where the
#   lifecycle data names no replacement, the newest undeprecated version of the same kind
#   the target serves stands in.
successor(k, target) := chained if {
	chained := chain_successor(k, target)
} else := sibling if {
	sibling := newest_sibling(k, target)
}

chain_successor(k, target) := ranked[0][1] if {
	ranked := sort([[rank, c] |
		some c in graph.reachable(replacements, {k})
		c != k
		e := kb.apis[c]
		served(e, target)
		rank := deprecation_rank(e, target)
	])
}

newest_sibling(k, target) := ranked[count(ranked) - 1][1] if {
	e := kb.apis[k]
	ranked := sort([[versions.ordinal(object.get(s, "introduced", "1.0")), c] |
		some c in by_group_kind[sprintf("%s/%s", [e.group, e.kind])]
		c != k
		s := kb.apis[c]
		served(s, target)
		not deprecated_by(s, target)
	])
	count(ranked) > 0
}

# METADATA
# description: Other versions of the same kind that the target serves, sorted.
served_siblings(k, target) := sort([api_version(kb.apis[s]) |
	e := kb.apis[k]
	some s in by_group_kind[sprintf("%s/%s", [e.group, e.kind])]
	s != k
	served(kb.apis[s], target)
])

deprecation_rank(e, target) := 1 if deprecated_by(e, target)

deprecation_rank(e, target) := 0 if not deprecated_by(e, target)
