# The findings contract, which every finding a custom pack makes is held to before the report
# counts it: report.rego's invalid_findings reads finding_problems.
package upgradescope.report

# METADATA
# description: |
#   The findings contract: an object whose key starts with its category, a known severity,
#   one of the input targets and a title, and whose other fields have the types the report
#   reads. A custom pack's finding that breaks it fails the evaluation instead of vanishing.
valid(f) if count(finding_problems(f)) == 0

# What is wrong with a custom finding, one message per broken rule of the contract.
finding_problems(f) := ["a finding must be an object"] if {
	not is_object(f)
} else := array.flatten([
	[sprintf("%s is required", [field]) | some field in required_fields; not field in object.keys(f)],
	[sprintf("%s must be %s", [field, kind]) |
		some field, v in f
		kind := finding_fields[field]
		not has_type(v, kind)
	],
	contract_problems(f),
])

required_fields := ["key", "category", "severity", "target", "title"]

# The fields the report reads from a finding and the type each must have; teams are the
# engine's (from namespace team labels, after this package), suppression is the report's own.
finding_fields := {
	"key": "a string", "category": "a string", "severity": "a string", "target": "a string",
	"title": "a string", "detail": "a string", "remediation": "a string",
	"objects": "an array of objects with a string name", "objectsOmitted": "an integer",
	"suppressedObjects": "an integer", "namespaces": "an array of strings",
	"citations": "an array of strings", "calls": "an array of strings",
	"callers": "an array of callers (userAgent, user, verb, count, firstSeen, lastSeen)",
	"callersOmitted": "an object with integer callers and calls",
	"teams": "an array of strings", "suppression": "absent (the report sets it)",
}

has_type(v, "a string") if is_string(v)

has_type(v, "an integer") if is_integer(v)

has_type(v, "an array of strings") if {
	is_collection(v)
	every x in v {
		is_string(x)
	}
}

has_type(v, "an array of objects with a string name") if {
	is_collection(v)
	every o in v {
		valid_object_ref(o)
	}
}

has_type(v, "an array of callers (userAgent, user, verb, count, firstSeen, lastSeen)") if {
	is_collection(v)
	every c in v {
		valid_caller(c)
	}
}

has_type(v, "an object with integer callers and calls") if {
	is_object(v)
	is_integer(v.callers)
	is_integer(v.calls)
}

valid_caller(c) if {
	is_object(c)
	is_integer(c.count)
	is_integer(object.get(c, "sourceRangesOmitted", 0))
	ranges := object.get(c, "sourceRanges", [])
	is_collection(ranges)
	every field in ["userAgent", "user", "verb", "firstSeen", "lastSeen"] {
		is_string(c[field])
	}
	every field in ["serviceAccount", "subresource"] {
		is_string(object.get(c, field, ""))
	}
	every r in ranges {
		is_string(r)
	}
}

is_integer(v) if {
	is_number(v)
	v == round(v)
}

is_collection(v) if is_array(v)

is_collection(v) if is_set(v)

valid_object_ref(o) if {
	is_object(o)
	is_string(o.name)
	is_integer(object.get(o, "line", 0))
	valid_ignore_annotation(object.get(o, "ignore", {}))
	every field in ["namespace", "file", "renderedFrom"] {
		is_string(object.get(o, field, ""))
	}
}

valid_ignore_annotation(a) if {
	is_object(a)
	is_string(object.get(a, "rules", ""))
	is_string(object.get(a, "reason", ""))
}

contract_problems(f) := array.flatten([
	["key must start with its category" |
		is_string(f.key)
		is_string(f.category)
		not startswith(f.key, f.category)
	],
	[sprintf("severity must be blocker, warning or info, not %v", [f.severity]) |
		is_string(f.severity)
		not severity_rank[f.severity]
	],
	[sprintf("target %v is not one of input.targets", [f.target]) |
		"target" in object.keys(f)
		not f.target in input.targets
	],
])
