package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// judgeFlags are the flags scan and eval share: what to judge against and how to report it.
type judgeFlags struct {
	targets         []string
	output          string
	failOn          string
	allowIncomplete bool
	configPath      string
	policies        []string
	now             string
	plan            bool
	from            string
	sarifBase       string
	bundles         bundleFlags
	quiet           bool
	printInput      bool
}

func (f *judgeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.targets, "target", nil, "target Kubernetes minor(s), e.g. 1.37 or 1.36,1.37 (required)")
	fl.StringVarP(&f.output, "output", "o", output.FormatTable, "output format: "+strings.Join(output.Formats(), ", "))
	fl.StringVar(&f.sarifBase, "sarif-base", "", "directory SARIF locations are relative to (default: the repository root holding --files, else the working directory)")
	fl.StringVar(&f.failOn, "fail-on", report.FailOnBlocker, "exit 2 on: blocker, warning or never")
	fl.BoolVar(&f.allowIncomplete, "allow-incomplete", false, "do not fail the gate when a verdict is unknown")
	fl.StringVar(&f.configPath, "config", "", "suppression file (default: .upgradescope.yaml beside the input, else in the working directory)")
	fl.StringArrayVar(&f.policies, "policy", nil, "custom rule pack: a directory or bundle .tar.gz rooted at upgradescope/custom/<name> (repeatable)")
	fl.BoolVar(&f.printInput, "print-input", false, "print the input the rules would judge, as JSON for opa eval -i, instead of judging it (docs/custom-rules.md)")
	fl.BoolVar(&f.plan, "plan", false, "judge every minor from the current one (--from) to --target, one hop at a time")
	fl.StringVar(&f.from, "from", "", "the minor a --plan starts from (default: the inventory's server version)")
	f.bundles.register(cmd)
	registerQuiet(cmd, &f.quiet)
	fl.StringVar(&f.now, "now", "", "evaluation clock as RFC 3339 (default: the current time); pins reports in tests")
	_ = fl.MarkHidden("now")
	_ = cmd.MarkFlagRequired("target")
	completeValues(cmd, "output", output.Formats()...)
	completeValues(cmd, "fail-on", report.FailOnBlocker, report.FailOnWarning, report.FailOnNever)
}

// judgement is a validated judgeFlags.
type judgement struct {
	targets []string
	format  string
	failOn  string
	now     time.Time
	// kubeContext and apiServer go into a live report's header.
	kubeContext, apiServer string
	// inventoryFile names the inventory eval read, with its size, for an error that blames
	// the input: "inventory.json, 15.5 MB".
	inventoryFile string
}

// parseTargets reads --target as every command takes it: minors, repeated or
// comma-separated ("1.36,1.37"), each as inventory.ParseTarget reads it.
func parseTargets(values []string) ([]string, error) {
	var out []string
	for _, t := range values {
		for _, part := range strings.Split(t, ",") {
			minor, err := inventory.ParseTarget(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, minor)
		}
	}
	return out, nil
}

func (f *judgeFlags) validate() (*judgement, error) {
	j := &judgement{}
	var err error
	if j.targets, err = parseTargets(f.targets); err != nil {
		return nil, err
	}
	if j.format, err = output.ParseFormat(f.output); err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	// Refused here, before a collection and an evaluation that could only end in this error.
	if f.plan {
		if err := output.CheckPlan(j.format); err != nil {
			return nil, fmt.Errorf("--plan: %w", err)
		}
	}
	if j.failOn, err = report.ParseFailOn(f.failOn); err != nil {
		return nil, fmt.Errorf("--fail-on: %w", err)
	}
	if j.now, err = parseNow(f.now); err != nil {
		return nil, err
	}
	return j, nil
}

// parseNow reads the hidden --now flag; empty means the current time.
func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --now %q: %w", s, err)
	}
	return t, nil
}

func (f *judgeFlags) newEngine(ctx context.Context, rep *progress.Reporter) (*engine.Engine, error) {
	opts, err := f.bundles.engineOptions(ctx)
	if err != nil {
		return nil, err
	}
	opts = append(opts, engine.WithToolVersion(version))
	for _, p := range f.policies {
		opts = append(opts, engine.WithPolicy(p))
	}
	return loadEngine(ctx, rep, opts)
}

// ignoreRules loads --config, or discovers .upgradescope.yaml in dir and then in the
// working directory; it returns the rules and the file they came from.
func (f *judgeFlags) ignoreRules(dir string) ([]report.IgnoreRule, string, error) {
	path := f.configPath
	if path == "" {
		for _, d := range []string{dir, "."} {
			if p, ok := config.Discover(d); ok {
				path = p
				break
			}
		}
	}
	if path == "" {
		return nil, "", nil
	}
	c, err := config.Load(filepath.Clean(path))
	if err != nil {
		return nil, "", err
	}
	return c.Ignore, c.Path, nil
}

// judge evaluates doc, renders the report and turns the gate into an exit code. It closes
// rep before the report is written.
func (f *judgeFlags) judge(ctx context.Context, s streams, rep *progress.Reporter, eng *engine.Engine, doc *inventory.Document, j *judgement, configDir string) error {
	rules, configPath, err := f.ignoreRules(configDir)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		configPath = ""
	}
	opts := []engine.EvalOption{engine.WithIgnore(rules)}
	if f.plan {
		from, hops, err := planHops(f.from, doc.ServerVersion, j.targets)
		if err != nil {
			return err
		}
		j.targets = hops
		opts = append(opts, engine.WithPlan(from))
	}
	if f.printInput {
		rep.Close()
		return printInput(s.out, eng.Input(doc, j.targets, j.now, opts...))
	}
	rep.Start("evaluating " + report.Count(len(j.targets), "target"))
	restore := roomToEvaluate(f.bundles.limits.memoryMiB)
	res, err := eng.Evaluate(ctx, doc, j.targets, j.now, opts...)
	restore()
	if err != nil {
		return blameInputs(err, j.inventorySource(doc), configPath)
	}
	var verdicts []string
	for _, t := range res.Targets {
		verdicts = append(verdicts, t.Target+" "+t.Verdict)
	}
	rep.Done(strings.Join(verdicts, ", "))
	rep.Close()
	res.KubeContext, res.APIServer = j.kubeContext, j.apiServer
	renderOpts := output.Options{FailOn: j.failOn, SARIFBase: sarifBase(f.sarifBase, res.FilesBase)}
	if err := output.Render(s.out, j.format, res, renderOpts); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	for _, r := range res.ExpiredIgnores {
		fmt.Fprintf(s.err, "warning: ignore rule at line %d expired on %s; its findings count again\n", r.Line, r.Expires)
	}
	if reason := res.Gate(j.failOn, f.allowIncomplete); reason != "" {
		return &exitError{code: exitGate, msg: "gate failed: " + reason}
	}
	return nil
}

// printInput writes in as `opa eval -i` reads it; "<" in a chart's kubeVersion stays
// readable.
func printInput(w io.Writer, in *engine.Input) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(in); err != nil {
		return fmt.Errorf("write input: %w", err)
	}
	return nil
}

// planHops turns --plan into one target per minor after from, up to the single --target.
func planHops(from, serverVersion string, targets []string) (string, []string, error) {
	if len(targets) != 1 {
		return "", nil, fmt.Errorf("--plan takes one --target, the minor the plan ends at")
	}
	if from == "" {
		if serverVersion == "" {
			return "", nil, fmt.Errorf("--plan needs --from when the inventory has no server version (files mode)")
		}
		v, err := inventory.ParseVersion(serverVersion)
		if err != nil {
			return "", nil, fmt.Errorf("--plan: server version: %w", err)
		}
		from = v.MinorString()
	}
	start, err := inventory.ParseVersion(from)
	if err != nil {
		return "", nil, fmt.Errorf("invalid --from: %w", err)
	}
	end, _ := inventory.ParseVersion(targets[0])
	if end.Major != start.Major || end.Minor <= start.Minor {
		return "", nil, fmt.Errorf("--plan: target %s is not after %s", targets[0], start.MinorString())
	}
	return start.MinorString(), start.MinorsAfter(end), nil
}

// sarifBase is where SARIF locations start: --sarif-base, else the repository root above the
// scanned files (code scanning maps locations from there), else the working directory.
func sarifBase(flag, filesBase string) string {
	if flag != "" || filesBase == "" {
		return flag
	}
	dir, err := filepath.Abs(filesBase)
	if err != nil {
		return ""
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		dir = filepath.Dir(dir)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return "."
		}
	}
}

// blameInputs adds, to a bound the built-in rules crossed over a large input, where that
// input came from: the rules are the same for everyone, so the inventory and the suppression
// file are what the user can look at (and the bound's flag, which withLimitFlag adds, what
// they can raise).
func blameInputs(err error, source, config string) error {
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Input == nil {
		return err
	}
	var from []string
	if len(le.Input.Inventory) > 0 {
		from = append(from, "inventory "+source)
	}
	if le.Input.IgnoreRules > 0 && config != "" {
		from = append(from, "ignore rules from "+config)
	}
	if len(from) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(from, "; "))
}

// inventorySource names where doc came from: the file eval read, the manifests scan read, or
// the cluster.
func (j *judgement) inventorySource(doc *inventory.Document) string {
	switch {
	case j.inventoryFile != "":
		return j.inventoryFile
	case doc.Source == inventory.SourceFiles && doc.FilesBase != "":
		return "of the manifests under " + doc.FilesBase
	default:
		return "of the cluster"
	}
}

// describeFile is path with its size: "inventory.json, 15.5 MB".
func describeFile(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return path
	}
	return fmt.Sprintf("%s, %.1f MB", path, float64(info.Size())/1e6)
}

// roomToEvaluate raises the soft memory limit of a one-shot command (tuneGCForOneShot) by
// the heap an evaluation may grow by, --policy-memory, until the returned func is called.
// The limit paces the collection, whose heap stays small; an evaluation of a large inventory
// holds more than the limit live, and under it the collector ran back to back: 9 s of CPU
// instead of 2.4, and past --policy-timeout, at 40,000 image versions. GOMEMLIMIT in the
// environment wins.
func roomToEvaluate(memoryMiB int) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(limit + int64(memoryMiB)<<20)
	return func() { debug.SetMemoryLimit(limit) }
}
