package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/output"
)

// dryRunFlags are bundle dry-run's flags; bundles are the current set the candidate joins.
type dryRunFlags struct {
	inventories string
	server      string
	caFile      string
	token       tokenFlag
	targets     []string
	failOn      string
	changedOnly bool
	output      string
	workers     int
	budget      time.Duration
	quiet       bool
	now         string
	bundles     bundleFlags
}

func newBundleDryRunCommand(s streams) *cobra.Command {
	var f dryRunFlags
	cmd := &cobra.Command{
		Use:   "dry-run CANDIDATE --inventories DIR | --server URL",
		Short: "Judge a fleet with a candidate bundle and show what it would change",
		Long: `Judge every inventory of DIR (one cluster per *.json file) with the current bundle set
and with the candidate in it (replacing the bundle of the same roots, or added as a custom
pack), at each cluster's next minor and every --target minor after it, and compare: verdict
and score before and after, the finding keys the candidate brings, changes and resolves.

Exit code 2 when a cluster would turn blocked (--fail-on chooses the threshold: new-blocker
also fails when a cluster already blocked gains a blocker it did not have) and, at every
threshold but never, when the candidate fails on a cluster or a cluster could not be judged.
--changed-only leaves out the clusters the candidate changes nothing on and says how many.

--server sends the candidate, a bundle tarball signed with the key of the server's
--verification-key, to a fleet server's POST /api/v1/bundles/dry-run instead: the server
judges every cluster's latest stored snapshot at the targets it judges it at, with the
candidate in its own bundle set, and compares with its stored evaluations. The table and
exit codes are the same; a progress line per cluster comes as the server judges it.`,
		Example: `  upgradescope bundle dry-run kb.tar.gz --inventories fleet/ --verification-key public.pem
  upgradescope bundle dry-run ./policies/acme --inventories fleet/ --target 1.37 --fail-on changed
  upgradescope bundle dry-run kb.tar.gz --inventories fleet/ --verification-key public.pem --changed-only --fail-on new-blocker
  upgradescope bundle dry-run kb.signed.tar.gz --server https://fleet.example.com --read-token-file read.token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.server != "" {
				return runServerDryRun(cmd, s, args[0], &f)
			}
			if err := refuseFlags(cmd, serverDryRunOnly, "applies to --server"); err != nil {
				return err
			}
			return withLimitFlag(runDryRun(cmd.Context(), s, args[0], &f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.inventories, "inventories", "", "directory of inventory files, one cluster each")
	fl.StringVar(&f.server, "server", "", "a fleet server's http(s) URL: judge its stored clusters instead of --inventories")
	fl.StringVar(&f.caFile, "server-ca-file", "", "PEM bundle trusted for an https --server, besides the system roots")
	f.token.register(cmd, "read-token", "UPGRADESCOPE_READ_TOKEN", "with --server: a fleet-wide read token (or the admin token)")
	fl.StringSliceVar(&f.targets, "target", nil, "minors to judge each cluster at besides its next one, e.g. 1.37,1.38 (repeatable)")
	fl.StringVar(&f.failOn, "fail-on", outcome.FailOnBlocked, "exit 2 when a cluster would turn blocked, turn blocked or gain a blocker though already blocked (new-blocker), turn blocked or unknown (unknown), change at all (changed), or never")
	fl.BoolVar(&f.changedOnly, "changed-only", false, "show only the clusters the candidate changes (and those it could not judge), with a line counting the rest")
	fl.StringVarP(&f.output, "output", "o", "table", "table or json")
	fl.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "clusters judged at once")
	fl.DurationVar(&f.budget, "budget", 10*time.Minute, "longest the whole dry run may take; clusters left are reported not judged (with --server: the server's default, 5m, at most 15m)")
	fl.StringVar(&f.now, "now", "", "evaluation clock as RFC 3339 (default: the current time); pins reports in tests")
	_ = fl.MarkHidden("now")
	registerQuiet(cmd, &f.quiet)
	f.bundles.register(cmd)
	completeValues(cmd, "fail-on", outcome.FailOnBlocked, outcome.FailOnNewBlocker, outcome.FailOnUnknown, outcome.FailOnChanged, outcome.FailOnNever)
	completeValues(cmd, "output", "table", "json")
	cmd.MarkFlagsMutuallyExclusive("inventories", "server")
	cmd.MarkFlagsOneRequired("inventories", "server")
	deprecatedAlias(cmd, "targets", "target")
	return cmd
}

func (f *dryRunFlags) validate() ([]string, error) {
	if _, err := outcome.ParseFailOn(f.failOn); err != nil {
		return nil, fmt.Errorf("--fail-on: %w", err)
	}
	if f.output != "table" && f.output != "json" {
		return nil, fmt.Errorf("--output %q: want table or json", f.output)
	}
	if f.workers < 1 || f.budget <= 0 {
		return nil, fmt.Errorf("--workers and --budget must be positive")
	}
	targets, err := parseTargets(f.targets)
	if err != nil {
		return nil, fmt.Errorf("--target: %w", err)
	}
	return targets, nil
}

func runDryRun(ctx context.Context, s streams, candidate string, f *dryRunFlags) error {
	targets, err := f.validate()
	if err != nil {
		return err
	}
	current, withCandidate, err := f.engines(ctx, candidate)
	if err != nil {
		return err
	}
	clusters, err := rollout.FromInventories(f.inventories, targets, current)
	if err != nil {
		return err
	}
	now, err := parseNow(f.now)
	if err != nil {
		return err
	}
	opts := rollout.Options{Workers: f.workers, Budget: f.budget, Now: now}
	if !f.quiet {
		done := 0
		opts.Progress = func(r outcome.Result) {
			done++
			fmt.Fprintf(s.err, "[%d/%d] %s\n", done, len(clusters), progressLine(r))
		}
	}
	results, summary := rollout.Run(ctx, clusters, withCandidate, opts)
	if err := writeDryRun(s, f, results, summary); err != nil {
		return err
	}
	return dryRunGate(summary, f.failOn)
}

// dryRunGate ends a dry run with exit code 2 when the summary fails the threshold, saying
// why; the reason names clusters, escaped (output.Escape). A summary without new blockers
// (from a server of an earlier release) cannot be judged at new-blocker: exit 1, never a
// pass.
func dryRunGate(summary outcome.Summary, failOn string) error {
	if failOn == outcome.FailOnNewBlocker && summary.NewBlockers == nil {
		return fmt.Errorf("--fail-on new-blocker: the answer does not report new blockers (a server of an earlier release); upgrade the server, or use --fail-on blocked or changed")
	}
	if reason := summary.Fails(failOn); reason != "" {
		return &exitError{code: exitGate, msg: "dry run failed: " + output.Escape(reason)}
	}
	return nil
}

// engines builds the current set and the same set with the candidate, which is read with
// the same verification as every --bundle (required when it is a URL) and replaces the
// bundle of the same roots (policyset.Set.WithCandidate): a new revision of a bundle the
// fleet already runs.
func (f *dryRunFlags) engines(ctx context.Context, candidate string) (current, withCandidate *engine.Engine, err error) {
	set, err := f.bundles.bundleSet(ctx)
	if err != nil {
		return nil, nil, err
	}
	vc, err := f.bundles.verification()
	if err != nil {
		return nil, nil, err
	}
	if vc == nil && bundles.IsURL(candidate) {
		return nil, nil, fmt.Errorf("candidate %s: bundles fetched over the network must be signed; pass --verification-key", bundles.SanitizedURL(candidate))
	}
	cand, err := bundles.Fetch(ctx, candidate, f.bundles.remote(), vc)
	if err != nil {
		return nil, nil, fmt.Errorf("candidate: %w", err)
	}
	current, _ = set.Engine()
	if withCandidate, err = set.WithCandidate(ctx, cand); err != nil {
		return nil, nil, fmt.Errorf("candidate %s does not load with the current bundles: %w", candidate, err)
	}
	return current, withCandidate, nil
}

// progressLine is a cluster's outcome in a few words, escaped (output.Escape): what turned,
// or that nothing did.
func progressLine(r outcome.Result) string { return output.Escape(resultWords(r)) }

func resultWords(r outcome.Result) string {
	if r.Error != "" {
		return r.Cluster + ": " + r.Error
	}
	var turned []string
	for _, d := range r.Targets {
		if v := d.Turned(); v != "" {
			was := "none"
			if d.Before != nil {
				was = d.Before.Verdict
			}
			turned = append(turned, fmt.Sprintf("%s %s → %s", d.Target, was, v))
		}
	}
	if len(turned) == 0 {
		return r.Cluster + ": no verdict changes"
	}
	return r.Cluster + ": " + strings.Join(turned, ", ")
}

// writeDryRun prints a dry run's results. The table shows what inventories and servers
// wrote (cluster names, errors, finding keys) with every value escaped first. With
// --changed-only, the JSON leaves the unchanged clusters' results out too and counts them
// in unchangedOmitted; its summary, like the table's, counts every cluster.
func writeDryRun(s streams, f *dryRunFlags, results []outcome.Result, summary outcome.Summary) error {
	if f.output == "table" {
		var opts []outcome.TableOption
		if f.changedOnly {
			opts = append(opts, outcome.ChangedOnly())
		}
		results, summary = escapedDryRun(results, summary)
		return outcome.WriteTable(s.out, results, summary, opts...)
	}
	var omitted *int
	if f.changedOnly {
		var n int
		results, n = outcome.ChangedResults(results)
		omitted = &n
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Results          []outcome.Result `json:"results"`
		UnchangedOmitted *int             `json:"unchangedOmitted,omitempty"`
		Summary          outcome.Summary  `json:"summary"`
	}{results, omitted, summary})
}

// escapedDryRun is a copy of a dry run's results and summary with every string escaped
// (output.Escape).
func escapedDryRun(results []outcome.Result, summary outcome.Summary) ([]outcome.Result, outcome.Summary) {
	out := make([]outcome.Result, len(results))
	for i, r := range results {
		r.Cluster, r.Error, r.Skipped = output.Escape(r.Cluster), output.Escape(r.Error), output.Escape(r.Skipped)
		targets := make([]outcome.Delta, len(r.Targets))
		for j, d := range r.Targets {
			d.Target, d.After.Verdict = output.Escape(d.Target), output.Escape(d.After.Verdict)
			if d.Before != nil {
				before := *d.Before
				before.Verdict = output.Escape(before.Verdict)
				d.Before = &before
			}
			d.New, d.Changed, d.Resolved = escapeAll(d.New), escapeAll(d.Changed), escapeAll(d.Resolved)
			d.NewBlockers = escapeAll(d.NewBlockers)
			targets[j] = d
		}
		r.Targets = targets
		out[i] = r
	}
	for _, list := range []*[]string{&summary.TurnedBlocked, &summary.NewBlockers, &summary.TurnedUnknown, &summary.TurnedReady, &summary.Changed,
		&summary.CandidateErrors, &summary.Unjudged, &summary.Skipped} {
		*list = escapeAll(*list)
	}
	return out, summary
}

// escapeAll is each of in escaped, in a new slice (nil for nil).
func escapeAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = output.Escape(s)
	}
	return out
}
