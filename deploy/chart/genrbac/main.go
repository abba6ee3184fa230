// Command genrbac writes deploy/chart/upgradescope/files/kb-rbac-rules.yaml, the reads the
// agent's ClusterRole grants, from the built-in bundles and the live collector's fixed
// reads, and files/kube-system-rbac-rules.yaml, those of its Role in kube-system. Run it with
// `go generate ./deploy/chart` or `make chart-rbac`; TestKBRulesAreCurrent fails when either
// file drifts.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/upgradescope/upgradescope/deploy/chart"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genrbac:", err)
		os.Exit(1)
	}
}

func run() error {
	rules, err := chart.KBRules()
	if err != nil {
		return err
	}
	// go generate runs in deploy/chart; make runs from the root.
	dir := "."
	if _, err := os.Stat(filepath.Join("upgradescope", "Chart.yaml")); err != nil {
		dir = filepath.Join("deploy", "chart")
	}
	for file, data := range map[string][]byte{chart.KBRulesFile: chart.RenderRules(rules), chart.KubeSystemRulesFile: chart.RenderKubeSystemRules()} {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
