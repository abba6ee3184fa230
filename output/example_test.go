package output_test

import (
	"log"
	"os"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// exampleReport is a report as the engine answers one: one target, one blocker naming its
// object at its file and line.
func exampleReport() *report.Report {
	return &report.Report{
		SchemaVersion: 1,
		EvaluatedAt:   "2026-11-29T12:00:00Z",
		Source:        "files",
		FilesBase:     "rendered",
		Bundles:       []report.BundleInfo{{Name: "rules", Revision: "2026-11-29.1", Source: "embedded"}},
		KB:            report.KBMeta{Horizon: "1.37", GeneratedFrom: "k8s.io/api v0.37.2"},
		Targets: []report.TargetResult{{
			Target: "1.37", Verdict: report.VerdictBlocked, Score: 75, Blockers: 1,
			Findings: []report.Finding{{
				Key: "removed-api/extensions/v1beta1/Ingress", Category: "removed-api", Severity: report.SeverityBlocker, Target: "1.37",
				Title:       "extensions/v1beta1 Ingress removed in 1.22 (1 object)",
				Remediation: "Migrate manifests and clients to networking.k8s.io/v1 Ingress.",
				Objects:     []inventory.ObjectRef{{Namespace: "shop", Name: "web", File: "ingress.yaml", Line: 4}},
				Citations:   []string{"https://kubernetes.io/docs/reference/using-api/deprecation-guide/"},
			}},
			Suppressed:  []report.Finding{},
			NotAssessed: []report.Gap{},
		}},
	}
}

// Render writes a report in a format by name; every format reads the same report.
func ExampleRender_table() {
	if err := output.Render(os.Stdout, output.FormatTable, exampleReport(), output.Options{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// upgradescope report
	// Source:   files (rendered)
	// KB:       k8s.io/api v0.37.2 (horizon 1.37)
	// Bundles:  rules 2026-11-29.1 (embedded)
	//
	// TARGET 1.37  VERDICT BLOCKED  SCORE 75/100  (1 blocker, 0 warnings, 0 info, 0 suppressed)
	//
	// BLOCKER (1)
	//   [removed-api] extensions/v1beta1 Ingress removed in 1.22 (1 object)
	//       objects: shop/web (ingress.yaml:4)
	//       fix: Migrate manifests and clients to networking.k8s.io/v1 Ingress.
	//       see: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
}

// The markdown format is a CI step summary or a pull request comment.
func ExampleRender_markdown() {
	if err := output.Render(os.Stdout, output.FormatMarkdown, exampleReport(), output.Options{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ## upgradescope
	//
	// Source files (`rendered`) · KB k8s.io/api v0.37.2 · Bundles rules 2026-11-29.1
	//
	// ### ⛔ Kubernetes 1.37: BLOCKED, score 75/100
	//
	// 1 blocker, 0 warnings, 0 info, 0 suppressed.
	//
	// | severity | finding | objects | fix |
	// |---|---|---|---|
	// | blocker | `removed-api` extensions/v1beta1 Ingress removed in 1.22 \(1 object\) ([source](https://kubernetes.io/docs/reference/using-api/deprecation-guide/)) | shop/web \(ingress.yaml:4\) | Migrate manifests and clients to networking.k8s.io/v1 Ingress. |
}
