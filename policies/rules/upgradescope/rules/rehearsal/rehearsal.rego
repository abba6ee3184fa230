# METADATA
# title: Rehearsal on an API server of the target
# description: |
#   What an API server of the target refused when upgradescope rehearse replayed the objects
#   into it (input.inventory.rehearsal): server-side apply with dryRun=All runs the server's
#   own validation and admission, so it refuses what a schema check passes (a selector that
#   does not match its template, a name the server's validation refuses, an immutable field
#   changed, an admission policy or webhook saying no). Objects that could not be replayed are
#   the rehearsal capability's gap, which makes the verdict unknown.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/server-side-apply/
#   - ref: https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
# custom:
#   category: rehearsal
package upgradescope.rules.rehearsal

section := object.get(input.inventory, "rehearsal", {})

ssa_docs := "https://kubernetes.io/docs/reference/using-api/server-side-apply/"

dry_run_docs := "https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run"

# METADATA
# title: Objects the target's API server refuses
# description: |
#   Each object the rehearsal's API server refused is a blocker at the rehearsal's target:
#   the same apply to a cluster at that minor fails, so a deploy after the upgrade does.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/server-side-apply/
#   - ref: https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
# custom:
#   families:
#     - id: rehearsal-rejected
#       title: Objects an API server of the target refuses
#       category: rehearsal
#       reads: [rehearsal.rejections]
#       capabilities: [rehearsal]
#       modes: [files, cluster]
#       severity: >-
#         blocker at the rehearsal's target (and only there: a server of one minor says
#         nothing of another) for each object its API server refused when replayed with
#         server-side apply and dryRun=All, whatever the server's reason (Invalid, Forbidden
#         by an admission policy or webhook, an immutable field, a type error in a custom
#         resource); objects that were not replayed have no finding, they are the rehearsal
#         capability's gap
#       citations:
#         - https://kubernetes.io/docs/reference/using-api/server-side-apply/
#         - https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
findings contains f if {
	section.target in input.targets
	some r in object.get(section, "rejections", [])
	f := finding(r, section.target)
}

finding(r, t) := {
	"key": sprintf("rehearsal/rejected/%s/%s", [r.kind, qualified(r)]),
	"category": "rehearsal",
	"severity": "blocker",
	"target": t,
	"title": sprintf("%s %s (%s): the %s API server refuses it: %s", [
		r.kind, qualified(r), source(object.get(r, "source", {})), t, r.reason,
	]),
	"detail": sprintf("Applied at %s with server-side apply and dryRun=All%s, the API server %s answered %s: %s", [
		r.apiVersion, converted(r), section.serverVersion, r.reason, r.message,
	]),
	"remediation": concat(" ", [
		"Change the object so that the target's API server accepts it (the message names the field and the rule),",
		sprintf("then rehearse again: upgradescope rehearse --target %s.", [t]),
	]),
	"objects": [object_ref(r)],
	"namespaces": [ns | ns := object.get(r, "namespace", ""); ns != ""],
	"citations": [ssa_docs, dry_run_docs],
}

qualified(r) := sprintf("%s/%s", [r.namespace, r.name]) if r.namespace

else := r.name

converted(r) := sprintf(" (converted from %s by upgradescope fix)", [r.originalApiVersion]) if r.originalApiVersion

else := ""

# source says where the object came from: file:line, a Helm release, an Argo CD application,
# or the live cluster.
source(s) := sprintf("%s:%d", [s.file, s.line]) if {
	s.file
	s.line
} else := s.file if s.file

else := sprintf("Helm release %s", [s.helmRelease]) if s.helmRelease

else := sprintf("Argo CD application %s", [s.application]) if s.application

else := "live" if s.live

else := "unknown source"

# object_ref is the object as a finding names it, with its file and line when it has them.
object_ref(r) := {k: v |
	some k, v in {
		"kind": r.kind,
		"namespace": object.get(r, "namespace", ""),
		"name": r.name,
		"file": object.get(r, ["source", "file"], ""),
		"line": object.get(r, ["source", "line"], 0),
	}
	not v in {"", 0}
}
