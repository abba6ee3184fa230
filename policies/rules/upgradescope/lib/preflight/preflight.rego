# METADATA
# title: Pre-flight helpers
# description: |
#   What the pre-flight packs (drain, admission webhooks, aggregated APIs, CRD conversion,
#   node health) share: naming a bounded list in a title, the objectsOmitted field, a
#   webhook's effective failure policy and whether a service backs anything now.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy
package upgradescope.lib.preflight

# METADATA
# scope: document
# description: |
#   Names as a title lists them: "a, b and 3 more", the count of those not named given
#   apart (a bounded list names up to a hundred).
named(names, 0) := concat(", ", names)

named(names, omitted) := sprintf("%s and %d more", [concat(", ", names), omitted]) if omitted > 0

# METADATA
# description: The objectsOmitted field of a finding, absent when nothing was left out.
omitted(n) := {"objectsOmitted": n} if n > 0

else := {}

# METADATA
# description: |
#   The failure policy a webhook runs with: as written, else the default of the API version
#   it was written at (Fail in admissionregistration.k8s.io/v1, the only version served
#   since 1.22; Ignore in v1beta1).
failure_policy(w) := object.get(w, "failurePolicy", default_failure_policy(w))

default_failure_policy(w) := "Ignore" if {
	w.apiVersion == "admissionregistration.k8s.io/v1beta1"
} else := "Fail"

# METADATA
# scope: document
# description: |
#   True when a service the API server calls has nothing behind it now: the service does
#   not exist, or none of its endpoints on the port is ready. Only live inventories say so;
#   a reference without those fields (files mode) is never down.
down(svc) if svc.found == false

down(svc) if svc.readyEndpoints == 0

# METADATA
# description: A service as a title names it.
service_name(svc) := sprintf("%s/%s", [svc.namespace, svc.name])

# METADATA
# description: A service as a finding lists it.
service_ref(svc) := {"kind": "Service", "namespace": svc.namespace, "name": svc.name}

# METADATA
# description: Why a service backs nothing, in words.
why_down(svc) := "does not exist" if svc.found == false

else := "has no ready endpoints"
