package outcome

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/upgradescope/upgradescope/report"
)

// TableOption adjusts WriteTable.
type TableOption func(*tableConfig)

type tableConfig struct{ changedOnly bool }

// ChangedOnly leaves out the clusters the candidate changes nothing on (Result.Unchanged)
// and says how many it left out; clusters not judged or skipped stay, and the summary
// still counts every cluster.
func ChangedOnly() TableOption { return func(c *tableConfig) { c.changedOnly = true } }

// WriteTable prints a dry run for a person: one row per cluster and target with the verdict
// and score before and after, the keys each target gains, changes and loses, then the
// summary.
func WriteTable(w io.Writer, results []Result, s Summary, opts ...TableOption) error {
	var cfg tableConfig
	for _, o := range opts {
		o(&cfg)
	}
	omitted := 0
	if cfg.changedOnly {
		results, omitted = ChangedResults(results)
	}
	if cfg.changedOnly && len(results) == 0 {
		fmt.Fprintln(w, "No cluster changes.")
	} else if err := writeRows(w, results); err != nil {
		return err
	}
	if omitted > 0 {
		fmt.Fprintf(w, "%s without change omitted.\n", report.Count(omitted, "cluster"))
	}
	for _, r := range results {
		writeDetail(w, r)
	}
	_, err := fmt.Fprintf(w, "\n%s\n", s)
	return err
}

// ChangedResults answers the results that are not Unchanged, in order, and how many were.
func ChangedResults(results []Result) ([]Result, int) {
	kept := make([]Result, 0, len(results))
	for _, r := range results {
		if !r.Unchanged() {
			kept = append(kept, r)
		}
	}
	return kept, len(results) - len(kept)
}

// writeRows prints a row per cluster and target of results.
func writeRows(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tTARGET\tBEFORE\tAFTER\tNEW\tCHANGED\tRESOLVED")
	for _, r := range results {
		if r.Error != "" || r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\n", r.Cluster)
			continue
		}
		for _, d := range r.Targets {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", r.Cluster, d.Target, before(d), show(d.After),
				len(d.New), len(d.Changed), len(d.Resolved))
		}
	}
	return tw.Flush()
}

func before(d Delta) string {
	if d.Before == nil {
		return "(none)"
	}
	return show(*d.Before)
}

// show is a verdict and its score. An unknown verdict's score counts only what was
// assessed, so it is left out rather than read as ready, as the dashboard and the exports do.
func show(j Judgement) string {
	if j.Verdict == report.VerdictUnknown {
		return j.Verdict
	}
	return fmt.Sprintf("%s %d", j.Verdict, j.Score)
}

// writeDetail lists what the candidate does to one cluster, beneath the table.
func writeDetail(w io.Writer, r Result) {
	if r.Error != "" || r.Skipped != "" {
		fmt.Fprintf(w, "\n%s: %s\n", r.Cluster, r.Error+r.Skipped)
		return
	}
	for _, d := range r.Targets {
		for _, part := range []struct {
			what string
			keys []string
		}{{"new", d.New}, {"changed", d.Changed}, {"resolved", d.Resolved}} {
			if len(part.keys) > 0 {
				fmt.Fprintf(w, "\n%s %s %s: %s", r.Cluster, d.Target, part.what, strings.Join(part.keys, ", "))
			}
		}
	}
	if changedAny(r) {
		fmt.Fprintln(w)
	}
}

func changedAny(r Result) bool {
	for _, d := range r.Targets {
		if len(d.New)+len(d.Changed)+len(d.Resolved) > 0 {
			return true
		}
	}
	return false
}

// String is the summary in one line per outcome.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in the dry run.", report.Count(s.Clusters, "cluster"))
	for _, part := range []struct {
		what string
		list []string
	}{
		{"would turn blocked", s.TurnedBlocked}, {"would gain a blocker", s.NewBlockers}, {"would turn unknown", s.TurnedUnknown},
		{"would turn ready", s.TurnedReady}, {"changed", s.Changed},
		{"the candidate fails on", s.CandidateErrors}, {"not judged", s.Unjudged},
		{"no target to judge at", s.Skipped}, // only a server's dry run skips a cluster
	} {
		if part.what == "no target to judge at" && len(part.list) == 0 {
			continue
		}
		if part.what == "would gain a blocker" && part.list == nil {
			continue // a server from before new blockers were reported
		}
		fmt.Fprintf(&b, "\n  %s: %d", part.what, len(part.list))
		if len(part.list) > 0 {
			b.WriteString(" (" + names(part.list) + ")")
		}
	}
	return b.String()
}
