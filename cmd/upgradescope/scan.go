package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

func newScanCommand(s streams) *cobra.Command {
	var jf judgeFlags
	var filesPath, teamLabel string
	var lf liveFlags
	var fb filesBudget
	var ef excludeFlags
	var cf chartFlags
	var af auditFlags
	cmd := &cobra.Command{
		Use:   "scan [--files PATH] --target 1.37",
		Short: "Collect an inventory (the current kubeconfig context's cluster, or manifests) and judge it",
		Example: `  upgradescope scan --target 1.37
  upgradescope scan --context prod --target 1.36,1.37 --output json
  upgradescope scan --files ./rendered --target 1.37
  upgradescope scan --files . --exclude '**/testdata/' --target 1.37
  upgradescope scan --files ./rendered --target 1.37 --output sarif --fail-on blocker
  upgradescope scan --target 1.37 --advise-charts
  upgradescope scan --target 1.37 --audit-log /var/log/kubernetes/audit/
  upgradescope scan --files ./rendered --audit-log exported-audit.log --target 1.37`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimitFlag(runScan(cmd, s, &jf, &lf, filesPath, teamLabel, fb, &ef, &cf, &af))
		},
	}
	jf.register(cmd)
	cmd.Flags().StringVar(&filesPath, "files", "", "rendered manifests: a directory (walked) or one file")
	cmd.Flags().StringVar(&teamLabel, "team-label", "team", "Namespace label whose value names the team that owns it")
	registerFilesBudget(cmd, &fb)
	ef.register(cmd)
	lf.register(cmd)
	lf.registerTimeout(cmd)
	cf.register(cmd)
	af.register(cmd, true)
	return cmd
}

// runScan collects and judges; newScanCommand names the flag of a bound it crosses.
func runScan(cmd *cobra.Command, s streams, jf *judgeFlags, lf *liveFlags, filesPath, teamLabel string, fb filesBudget, ef *excludeFlags, cf *chartFlags, af *auditFlags) error {
	tuneGCForOneShot()
	j, err := jf.validate()
	if err != nil {
		return err
	}
	if filesPath != "" && (cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")) {
		return fmt.Errorf("--files reads manifests: --kubeconfig and --context do not apply")
	}
	ex, err := ef.forFiles(filesPath, jf.configPath)
	if err != nil {
		return err
	}
	rep := newProgress(s, jf.quiet)
	defer rep.Close()
	eng, err := jf.newEngine(cmd.Context(), rep)
	if err != nil {
		return err
	}
	var values charts.Values
	if cf.advise {
		lf.values = &values
	}
	if filesPath == "" {
		doc, target, err := lf.collectLive(cmd.Context(), s, rep, eng, teamLabel, j.now)
		if err != nil {
			return err
		}
		j.kubeContext, j.apiServer = target.context, target.server
		if err := af.collect(cmd.Context(), s, rep, doc, j.now, lf.timeout); err != nil {
			return err
		}
		if err := jf.adviseCharts(cmd.Context(), rep, eng, cf, doc, values, j); err != nil {
			return err
		}
		return jf.judge(cmd.Context(), s, rep, eng, doc, j, ".")
	}
	doc, err := collectFilesWithin(s, rep, eng, filesPath, teamLabel, j.now, filesBudget{maxMiB: fb.maxMiB, timeout: lf.timeout, exclude: ex, values: &values})
	if err != nil {
		return err
	}
	if err := af.collect(cmd.Context(), s, rep, doc, j.now, lf.timeout); err != nil {
		return err
	}
	if err := jf.adviseCharts(cmd.Context(), rep, eng, cf, doc, values, j); err != nil {
		return err
	}
	return jf.judge(cmd.Context(), s, rep, eng, doc, j, configDir(filesPath))
}

// adviseCharts runs the chart advisor, when --advise-charts asks, at the scan's targets (or
// every hop of --plan), before the evaluation that reads its advice.
func (f *judgeFlags) adviseCharts(ctx context.Context, rep *progress.Reporter, eng *engine.Engine, cf *chartFlags, doc *inventory.Document, values charts.Values, j *judgement) error {
	if !cf.advise {
		return nil
	}
	targets, err := f.adviseTargets(doc, j)
	if err != nil {
		return err
	}
	return cf.run(ctx, rep, eng, doc, values, targets, j.now)
}

// filesBudget is what a walk of manifests may spend: bytes read in all (--files-max-mib) and
// time (--timeout). Past either, what was not read is reported and the verdict is unknown.
// exclude is what the walk leaves out (--exclude, .upgradescopeignore), listed, never judged.
type filesBudget struct {
	maxMiB  int
	timeout time.Duration
	exclude *files.Exclude
	// values, when set, receives the values the GitOps objects among the files declare.
	values *charts.Values
}

// registerFilesBudget adds --files-max-mib; --timeout is the live collection's flag.
func registerFilesBudget(cmd *cobra.Command, b *filesBudget) {
	cmd.Flags().IntVar(&b.maxMiB, "files-max-mib", files.DefaultMaxBytes>>20, "MiB of manifests --files reads in all; files past it are not read and the verdict is unknown")
}

// collectFiles walks manifests into an inventory within the default budget.
func collectFiles(s streams, rep *progress.Reporter, eng *engine.Engine, path, teamLabel string, now time.Time, ex *files.Exclude) (*inventory.Document, error) {
	return collectFilesWithin(s, rep, eng, path, teamLabel, now, filesBudget{timeout: 5 * time.Minute, exclude: ex})
}

// collectFilesWithin walks manifests into an inventory, printing each warning with its
// file:line. A walk that found no Kubernetes object is an error: a wrong path must not read
// as ready.
func collectFilesWithin(s streams, rep *progress.Reporter, eng *engine.Engine, path, teamLabel string, now time.Time, b filesBudget) (*inventory.Document, error) {
	if b.maxMiB < 0 {
		return nil, fmt.Errorf("--files-max-mib %d: must not be negative", b.maxMiB)
	}
	opts := files.Options{
		Observe: eng.Observe(), TeamLabel: teamLabel, MaxBytes: int64(b.maxMiB) << 20, Exclude: b.exclude,
	}
	if b.timeout > 0 {
		opts.Deadline = time.Now().Add(b.timeout)
	}
	rep.Start("reading manifests in " + path)
	res, err := files.Collect(path, opts)
	if err != nil {
		return nil, err
	}
	rep.Done(report.Count(res.Objects, "object") + " in " + report.Count(res.Files, "file"))
	if b.values != nil && len(res.GitOps) > 0 {
		b.values.GitOps = gitops.FromManifests(res.GitOps).Values
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
	if n := len(res.Excluded) + res.ExcludedOmitted; n > 0 {
		fmt.Fprintf(s.err, "note: %s excluded, not read (listed in the report)\n", report.Count(n, "path"))
	}
	if res.Objects == 0 {
		return nil, fmt.Errorf("no Kubernetes objects found in %s (%d manifest files read)", path, res.Files)
	}
	return files.Inventory(res, now), nil
}

func configDir(filesPath string) string {
	if info, err := os.Stat(filesPath); err == nil && !info.IsDir() {
		return filepath.Dir(filesPath)
	}
	return filesPath
}
