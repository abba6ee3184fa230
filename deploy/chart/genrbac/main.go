// Command genrbac writes deploy/chart/upgradescope/files/kb-rbac-rules.yaml: the reads the
// agent's ClusterRole grants, from the built-in bundles. Run it with `go generate
// ./deploy/chart` or `make chart-rbac`; TestKBRulesAreCurrent fails when the file drifts.
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
	path := chart.KBRulesFile
	if _, err := os.Stat("upgradescope"); err != nil {
		path = filepath.Join("deploy", "chart", path)
	}
	if err := os.WriteFile(path, chart.RenderRules(rules), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
