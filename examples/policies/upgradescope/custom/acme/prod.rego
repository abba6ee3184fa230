# METADATA
# title: ACME production namespaces stay off deprecated APIs
# description: |
#   ACME's platform team does not let production namespaces (prod-*) run on an API that is
#   deprecated at the target, even before it is removed: a warning names the namespaces.
# related_resources:
#   - ref: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
# custom:
#   category: acme-prod-deprecated
package upgradescope.custom.acme

import data.upgradescope.kb
import data.upgradescope.lib.apis

# METADATA
# description: A warning per deprecated API used in a prod-* namespace.
findings contains f if {
	some u in input.inventory.apiUsage
	some t in input.targets
	e := kb.apis[apis.key(u.group, u.version, u.kind)]
	apis.deprecated_by(e, t)
	prod := sort([ns | some ns, _ in u.namespaces; startswith(ns, "prod-")])
	count(prod) > 0
	f := {
		"key": sprintf("acme-prod-deprecated/%s", [apis.key(u.group, u.version, u.kind)]),
		"category": "acme-prod-deprecated",
		"severity": "warning",
		"target": t,
		"title": sprintf("%s %s is deprecated and still used in production", [apis.api_version(e), u.kind]),
		"detail": sprintf("Production namespaces: %s", [concat(", ", prod)]),
		"remediation": "Migrate before the next change freeze (ACME policy PLAT-12).",
		"objects": [o | some o in u.objects; startswith(object.get(o, "namespace", ""), "prod-")],
		"namespaces": prod,
		"citations": ["https://wiki.example.com/platform/PLAT-12"],
	}
}
