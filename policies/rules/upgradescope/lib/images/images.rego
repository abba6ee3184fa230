# METADATA
# title: Container image references
# description: |
#   Parses image references the way container runtimes resolve them (docker.io and its
#   library/ namespace for bare names, tags, digests) so add-on matchers compare like with
#   like, and finds matchers by path segments so a registry mirror matches too.
# related_resources:
#   - ref: https://github.com/distribution/reference/blob/main/reference.go
package upgradescope.lib.images

# METADATA
# description: |
#   The parts of a reference: registry, path (repository without registry), tag and digest.
#   Bare Docker Hub names gain library/; index.docker.io is docker.io.
parse(ref) := {"registry": registry, "path": path, "tag": tag, "digest": digest} if {
	m := regex.find_all_string_submatch_n(`^([^@]+?)(?::([A-Za-z0-9_][A-Za-z0-9_.-]*))?(?:@([A-Za-z0-9+._-]+:[A-Fa-f0-9]+))?$`, ref, 1)[0]
	name := lower(m[1])
	tag := m[2]
	digest := m[3]
	[registry, path] := split_registry(name)
}

split_registry(name) := [registry_name(first), rest] if {
	[first, rest] := split_first(name)
	is_registry(first)
}

split_registry(name) := ["docker.io", docker_path(name)] if {
	not is_registry(first_segment(name))
}

split_first(name) := [substring(name, 0, i), substring(name, i + 1, -1)] if {
	i := indexof(name, "/")
	i > 0
}

first_segment(name) := split(name, "/")[0]

is_registry(segment) if contains(segment, ".")

is_registry(segment) if contains(segment, ":")

is_registry("localhost")

registry_name("index.docker.io") := "docker.io"

registry_name(r) := r if r != "index.docker.io"

docker_path(name) := concat("/", ["library", name]) if not contains(name, "/")

docker_path(name) := name if contains(name, "/")

# METADATA
# description: |
#   The reference an inventory image version spells: repository[:tag][@digest], as the
#   workload wrote it.
reference(repository, version) := concat("", [repository, tag_part(version), digest_part(version)])

tag_part(version) := concat("", [":", version.tag]) if version.tag != ""

else := ""

digest_part(version) := concat("", ["@", version.digest]) if version.digest != ""

else := ""

# METADATA
# description: |
#   Every run of consecutive path segments: the keys a matcher's path is looked up by, so
#   "harbor.corp/mirror/ingress-nginx/controller" finds "ingress-nginx/controller".
segment_runs(path) := {concat("/", array.slice(segs, i, j)) |
	segs := split(path, "/")
	some i in numbers.range(0, count(segs) - 1)
	some j in numbers.range(i + 1, count(segs))
}

# METADATA
# description: The release version a tag names ("v1.9.4" → "1.9.4", "2.1" → "2.1.0"); undefined for latest, digests and other tags.
tag_version(tag) := version if {
	m := regex.find_all_string_submatch_n(`^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?`, tag, 1)[0]
	version := sprintf("%s.%s.%s", [m[1], m[2], patch(m[3])])
}

patch("") := "0"

patch(p) := p if p != ""

# METADATA
# description: The release line of a version ("1.9.4" → "1.9").
line(version) := concat(".", array.slice(split(version, "."), 0, 2))
