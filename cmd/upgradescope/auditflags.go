package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// auditFlags read the API server's audit log beside a cluster or manifests (--audit-log):
// who calls the deprecated APIs (docs/audit.md).
type auditFlags struct {
	paths []string
	since string
	// window is --audit-since, parsed by check.
	window time.Duration
	// stdin is whether "-" may name standard input: not for the agent, which has none.
	stdin bool
	flags *pflag.FlagSet
}

// stdinPath is the --audit-log that reads standard input.
const stdinPath = "-"

func (f *auditFlags) register(cmd *cobra.Command, stdin bool) {
	fl := cmd.Flags()
	f.flags, f.stdin = fl, stdin
	// Checked before anything is collected: a typo in a path must not cost a collection.
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		return f.check()
	}
	what := "the API server's audit log (JSON lines, rotated and gzip-compressed files read too): a file, a directory holding a log and its rotations"
	if stdin {
		what += ", or - for standard input"
	}
	fl.StringArrayVar(&f.paths, "audit-log", nil, what+"; names the callers of deprecated APIs (repeatable; docs/audit.md)")
	fl.StringVar(&f.since, "audit-since", "30d", "the window of --audit-log before the collection's time: a caller not seen in it has stopped calling; days as 30d, or a Go duration")
}

// check refuses what would read nothing or read wrongly: --audit-since alone, standard
// input twice or where there is none, and a path that cannot be opened, named.
func (f *auditFlags) check() error {
	if len(f.paths) == 0 {
		if f.flags != nil && f.flags.Changed("audit-since") {
			return errors.New("--audit-since is only used with --audit-log: add --audit-log FILE or drop --audit-since")
		}
		return nil
	}
	var err error
	if f.window, err = parseDays("audit-since", f.since, 30); err != nil {
		return err
	}
	if f.window == 0 {
		return fmt.Errorf("--audit-since %q: want a window longer than 0", f.since)
	}
	for i, p := range f.paths {
		if err := f.checkPath(p, slices.Contains(f.paths[:i], stdinPath)); err != nil {
			return err
		}
	}
	return nil
}

// checkPath opens p (a file, or a directory to list) and closes it again; the reading is
// Collect's.
func (f *auditFlags) checkPath(p string, stdinSeen bool) error {
	switch {
	case p == "":
		return errors.New("--audit-log: empty path")
	case p == stdinPath && !f.stdin:
		return errors.New("--audit-log -: the agent reads files: mount the log and give its path")
	case p == stdinPath && stdinSeen:
		return errors.New("--audit-log - is given twice: standard input can be read once")
	case p == stdinPath:
		return nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("--audit-log: %w", err)
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		// a pipe (`<(ssh … cat audit.log)`) or a FIFO: opening one waits for its writer, so
		// it is opened by the reading, under --timeout
		return nil
	}
	fh, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("--audit-log: %w", err)
	}
	defer fh.Close()
	if info.IsDir() {
		if _, err := fh.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("--audit-log: %w", err)
		}
	}
	return nil
}

// options are what Collect reads for a collection at now: the window starts --audit-since
// before the collection's clock, the clock CollectedAt records.
func (f *auditFlags) options(now time.Time, stdin io.Reader) audit.Options {
	return audit.Options{Paths: f.paths, Stdin: stdin, Since: now.Add(-f.window)}
}

// collect reads the audit log into doc, its section and its capability, within timeout,
// showing the step on rep and the malformed lines on s.err. A path that cannot be read ends
// the command, naming it; a malformed line never does.
func (f *auditFlags) collect(ctx context.Context, s streams, rep *progress.Reporter, doc *inventory.Document, now time.Time, timeout time.Duration) error {
	if len(f.paths) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep.Start("reading the audit log in " + strings.Join(f.paths, ", "))
	section, capability, err := collectAudit(ctx, f.options(now, s.in))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("--audit-log was not read within --timeout %s: raise --timeout", timeout)
		}
		return fmt.Errorf("--audit-log: %w", err)
	}
	rep.Done(auditSummary(section))
	attachAudit(doc, section, capability)
	if w := malformedWarning(section); w != "" {
		fmt.Fprintln(s.err, "warning: "+w)
	}
	return nil
}

// forAgent is the agent's audit reading, nil without --audit-log: every tick reads the
// mounted log again, within the tick's collection budget. A path that cannot be read is the
// capability's reason and a warning, never the end of the agent.
func (f *auditFlags) forAgent(log *slog.Logger) func(context.Context, *inventory.Document, time.Time) {
	if len(f.paths) == 0 {
		return nil
	}
	return func(ctx context.Context, doc *inventory.Document, now time.Time) {
		section, capability, err := collectAudit(ctx, f.options(now, nil))
		if err != nil {
			log.Warn("audit log not read", "error", err.Error())
			attachAudit(doc, nil, inventory.Capability{Reason: "audit log not read: " + err.Error()})
			return
		}
		attachAudit(doc, section, capability)
		if w := malformedWarning(section); w != "" {
			log.Warn(w)
		}
		log.Info("audit log read", "calls", auditSummary(section))
	}
}

func attachAudit(doc *inventory.Document, section *inventory.AuditCalls, capability inventory.Capability) {
	doc.AuditCalls = section
	if doc.Capabilities == nil {
		doc.Capabilities = map[string]inventory.Capability{}
	}
	doc.Capabilities[inventory.CapAuditLog] = capability
}

// auditSummary is the progress line: "120000 events, 3 callers of deprecated APIs".
func auditSummary(s *inventory.AuditCalls) string {
	if s == nil {
		return "nothing read"
	}
	callers := len(s.Callers)
	for _, o := range s.Omitted {
		callers += int(o.Callers)
	}
	return fmt.Sprintf("%s, %s of deprecated APIs", report.Count(int(s.Events), "event"), report.Count(callers, "caller"))
}

// location is the file:line a malformed-line entry starts with ("file:line: reason").
var location = regexp.MustCompile(`^(.*?:[0-9]+)(: |$)`)

// malformedWarning says how many lines were not audit events and where the first was,
// never what it held: a log line can carry a token or a secret's name.
func malformedWarning(s *inventory.AuditCalls) string {
	if s == nil || s.Malformed == 0 {
		return ""
	}
	first := ""
	if len(s.MalformedAt) > 0 {
		if m := location.FindStringSubmatch(s.MalformedAt[0]); m != nil {
			first = "; the first at " + m[1]
		}
	}
	what := "that are not audit events"
	if s.Malformed == 1 {
		what = "that is not an audit event"
	}
	return fmt.Sprintf("the audit log has %s %s (skipped%s)", report.Count(int(s.Malformed), "line"), what, first)
}

// collectAudit is audit.Collect ending at ctx's deadline even when a read blocks: Collect
// looks at ctx between records, and a read of a pipe nobody writes to (an idle `-`, a FIFO
// whose writer never opens it) never returns to look. The blocked reading is left behind;
// the command ends, and the agent's next tick starts another.
func collectAudit(ctx context.Context, o audit.Options) (*inventory.AuditCalls, inventory.Capability, error) {
	type result struct {
		section    *inventory.AuditCalls
		capability inventory.Capability
		err        error
	}
	done := make(chan result, 1)
	go func() {
		section, capability, err := audit.Collect(ctx, o)
		done <- result{section, capability, err}
	}()
	select {
	case r := <-done:
		return r.section, r.capability, r.err
	case <-ctx.Done():
		return nil, inventory.Capability{}, ctx.Err()
	}
}
