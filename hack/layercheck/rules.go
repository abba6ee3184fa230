package main

// rules are the layer rules, package paths relative to the module's path.
type rules struct {
	// noOPA lists packages that must not link anything under forbiddenPrefix.
	noOPA []string
	// forbiddenPrefix is the import path prefix noOPA's packages must not depend on.
	forbiddenPrefix string
	// cmdDir is the folder whose packages no package outside it may import.
	cmdDir string
	// methodsUnder is the folder whose packages' named types are held to maxMethods.
	methodsUnder string
	// maxMethods bounds each type's declared methods, pointer and value receivers together.
	maxMethods int
	// methodsExempt lists "pkg.Type" names the bound does not hold.
	methodsExempt []string
}

// upgradescopeRules are the rules `make vet` enforces.
var upgradescopeRules = rules{
	// Report readers (renderers, the CRD, the suppression file, the wire formats), the
	// server's admission of work, the store, notifications, the dashboard's pages, the fleet API's wire types and its
	// client, a rollout's outcome tables, the loopback test and the knowledge base's
	// tables: none of them judges, so none links the evaluator. Nor do the facts the
	// engine computes in Go before the rules run (engine/facts), or the pre-flight
	// observations both collectors make of objects (collectors/preflight), nor the
	// conversions of `fix` (convert, fix): rewriting a manifest never depends on a rule. Nor
	// reading a chart repository or rendering a chart (charts/repo, charts/render): only the
	// advisor judges the versions they yield. Nor reading audit events (collectors/audit):
	// the rules judge the callers it counts.
	noOPA: []string{
		"kb", "engine/facts", "collectors/preflight", "collectors/audit", "charts/repo", "charts/render", "output", "report", "crd", "config",
		"fleet/api", "fleet/push", "fleet/client", "bundles/rollout/outcome", "internal/loopback", "internal/hostcheck",
		"fleet/server/admission", "fleet/server/store", "fleet/server/notify", "fleet/server/web",
		"convert", "fix",
	},
	forbiddenPrefix: "github.com/open-policy-agent/",
	cmdDir:          "cmd",
	methodsUnder:    "fleet/server",
	maxMethods:      25,
	// The store's one database/sql implementation serves both backends (SQLite and
	// PostgreSQL) and holds every method of the Store interface: its size is the
	// interface's, held in check by storetest's conformance suite instead.
	methodsExempt: []string{"fleet/server/store.sqlStore"},
}
