# METADATA
# title: Knowledge base horizon
# description: |
#   The API lifecycle data describes Kubernetes up to its horizon. A target or a server newer
#   than that cannot be judged for removals, so it is a warning here and a required gap in
#   the report.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
# custom:
#   category: kb-stale
package upgradescope.rules.kbstale

import data.upgradescope.kb
import data.upgradescope.lib.versions

# METADATA
# description: A warning per target when the target or the server is past the horizon.
# custom:
#   notice:
#     category: kb-stale
#     why: >-
#       A target or server past the knowledge base's horizon is a limit of what upgradescope knows
#       (the report's required kb-coverage gap), not a risk of the upgrade.
findings contains f if {
	some t in input.targets
	newest := max({versions.ordinal(t)} | server_ordinal)
	newest > versions.ordinal(kb.meta.horizon)
	f := {
		"key": "kb-stale",
		"category": "kb-stale",
		"severity": "warning",
		"target": t,
		"title": sprintf("knowledge base does not cover Kubernetes %s (newest known: %s)", [
			versions.minor(newest), kb.meta.horizon,
		]),
		"detail": sprintf("The API lifecycle data was generated from %s; removals after %s are unknown.", [
			kb.meta.generatedFrom, kb.meta.horizon,
		]),
		"remediation": "Update upgradescope or load a newer knowledge-base bundle.",
		"objects": [],
		"namespaces": [],
		"citations": [kb.meta.citation],
	}
}

server_ordinal contains versions.cluster
