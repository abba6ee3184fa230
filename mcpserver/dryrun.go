package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/report"
)

// A dry run is the fleet server's (POST /api/v1/bundles/dry-run): it judges every cluster's
// latest snapshot with the candidate in its bundle set, compares with what it stored, and
// stores nothing, so a read-only tool may ask for it. The server runs one at a time and
// only for a fleet-wide credential.
const (
	// dryRunBudget is the time the server may take, asked for explicitly (its own default,
	// fleet/server.DefaultDryRunBudget) so the wait below is known whatever its version.
	dryRunBudget = 5 * time.Minute
	// dryRunSlack is how long past its budget the answer may take, as bundle dry-run
	// --server waits: the upload, the clusters in flight when it ran out, the summary.
	dryRunSlack = 2 * time.Minute
	// maxDryRunsKept is how many dry runs of a session a cursor can still page: a dry run
	// judges the whole fleet, so paging never runs it again; maxDryRunsInAll bounds those
	// of every session.
	maxDryRunsKept  = 4
	maxDryRunsInAll = 16
)

// DryRunInput is dry_run_bundle's input: a candidate, or the cursor of a previous page.
type DryRunInput struct {
	Bundle string `json:"bundle,omitempty" jsonschema:"a signed candidate bundle .tar.gz under the server's root, made with upgradescope bundle build and bundle sign"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer: pages the same dry run without running it again"`
}

// DryRunAnswer is a dry run summarised: the counts, the clusters gaining a blocker, then
// one line per cluster and target the candidate changes, worst first.
type DryRunAnswer struct {
	Run         string         `json:"run" jsonschema:"id of this dry run"`
	Candidate   string         `json:"candidate" jsonschema:"the candidate: its file, revision and roots"`
	JudgedWith  []string       `json:"judgedWith" jsonschema:"the bundles the server judges with now; the candidate replaces the one of its roots, or joins them"`
	Summary     DryRunCounts   `json:"summary"`
	NewBlockers []string       `json:"newBlockers" jsonschema:"clusters gaining a blocker at some target, blocked before or not; past five, counted"`
	Total       int            `json:"total" jsonschema:"changes in all"`
	First       int            `json:"first" jsonschema:"index of the first change shown"`
	Changes     []DryRunChange `json:"changes" jsonschema:"clusters the candidate fails on or could not judge first, then those turning blocked, gaining a blocker, turning unknown, changing otherwise, turning ready"`
	Next        string         `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// DryRunCounts counts the clusters of a dry run's summary (outcome.Summary) in each list.
type DryRunCounts struct {
	Clusters        int `json:"clusters"`
	TurnedBlocked   int `json:"turnedBlocked"`
	TurnedUnknown   int `json:"turnedUnknown"`
	TurnedReady     int `json:"turnedReady"`
	Changed         int `json:"changed" jsonschema:"clusters with a verdict turned or a finding new, changed or resolved"`
	NewBlockers     int `json:"newBlockers"`
	CandidateErrors int `json:"candidateErrors" jsonschema:"clusters the candidate failed on"`
	Unjudged        int `json:"unjudged" jsonschema:"clusters not judged: unreadable, or the budget ran out"`
	Skipped         int `json:"skipped,omitempty" jsonschema:"clusters with no target to judge at"`
}

// DryRunChange is what the candidate changes on one cluster at one target, or why the
// cluster was not judged.
type DryRunChange struct {
	Cluster        string   `json:"cluster"`
	Target         string   `json:"target,omitempty"`
	From           string   `json:"from,omitempty" jsonschema:"the verdict stored now; absent when none was stored"`
	To             string   `json:"to,omitempty" jsonschema:"the verdict with the candidate"`
	NewBlockers    []string `json:"newBlockers,omitempty" jsonschema:"keys of the blockers it brings; past three, counted"`
	New            int      `json:"new,omitempty" jsonschema:"findings it brings"`
	Resolved       int      `json:"resolved,omitempty" jsonschema:"findings it takes away"`
	Error          string   `json:"error,omitempty" jsonschema:"why the cluster was not judged"`
	CandidateError bool     `json:"candidateError,omitempty" jsonschema:"the candidate itself failed on the cluster"`
}

var dryRunTool = &mcp.Tool{
	Name:  "dry_run_bundle",
	Title: "Dry-run a candidate bundle on the fleet",
	Description: "Ask the fleet server (--server) what a signed candidate bundle would change: it judges every cluster's latest snapshot " +
		"with the candidate in its bundle set and compares with what it stored. Read-only: the server stores nothing and no verdict changes. " +
		"Needs a fleet-wide read token (a team-scoped one is refused); one dry run at a time per server, up to a few minutes. " +
		"Answers the counts, the clusters gaining a blocker and each change, worst first; paged: pass the answer's next as cursor.",
}

// dryRunPage is what a dry run's cursor names.
type dryRunPage struct {
	Run string `json:"run"`
}

func (s *Server) dryRunBundle(ctx context.Context, in DryRunInput) (DryRunAnswer, error) {
	if in.Cursor != "" {
		p, at, err := decodeCursor[dryRunPage](in.Cursor)
		if err != nil {
			return DryRunAnswer{}, err
		}
		run, err := s.dryRuns.get(ctx, p.Run)
		if err != nil {
			return DryRunAnswer{}, err
		}
		return run.page(at), nil
	}
	fc, err := s.fleet()
	if err != nil {
		return DryRunAnswer{}, err
	}
	raw, name, err := s.readCandidate(in.Bundle)
	if err != nil {
		return DryRunAnswer{}, err
	}
	wait, cancel := context.WithTimeout(ctx, dryRunBudget+dryRunSlack)
	defer cancel()
	results, summary, err := fc.DryRun(wait, raw, dryRunBudget, nil)
	if err != nil {
		return DryRunAnswer{}, fmt.Errorf("dry run of %s: %w", name, err)
	}
	f, err := fc.Fleet(ctx, "")
	if err != nil {
		return DryRunAnswer{}, fmt.Errorf("read the fleet's bundles: %w", err)
	}
	run := &dryRun{head: DryRunAnswer{Candidate: clip(name, maxLine), JudgedWith: serverBundles(f.Bundles),
		Summary: countsOf(summary), NewBlockers: firstFew(summary.NewBlockers, 5, maxLine)}, changes: changesOf(results)}
	if run.head.NewBlockers == nil {
		run.head.NewBlockers = []string{}
	}
	s.dryRuns.add(ctx, run)
	return run.page(0), nil
}

// readCandidate reads the candidate tarball under the root as bundle dry-run --server
// reads one (a file, not a directory, of at most bundles.MaxSize), and names it by its
// file, revision and roots. An unsigned candidate is refused here: the server would.
func (s *Server) readCandidate(path string) ([]byte, string, error) {
	if path == "" {
		return nil, "", fmt.Errorf("bundle: name a signed candidate bundle .tar.gz under the root %s", s.root)
	}
	abs, err := s.within(path)
	if err != nil {
		return nil, "", err
	}
	shown := s.shown(abs)
	if info, err := os.Stat(abs); err == nil && info.IsDir() {
		return nil, "", fmt.Errorf("candidate %s is a directory: the server takes a signed bundle tarball, made with upgradescope bundle build and bundle sign", shown)
	}
	raw, err := smallfile.Read(abs, bundles.MaxSize)
	if err != nil {
		return nil, "", fmt.Errorf("candidate: %w", err)
	}
	sum, err := bundles.Inspect(bytes.NewReader(raw))
	if err != nil {
		return nil, "", fmt.Errorf("candidate %s: %w", shown, err)
	}
	if !sum.Signed {
		return nil, "", fmt.Errorf("candidate %s is not signed: the server verifies candidates with its key; sign it with upgradescope bundle sign", shown)
	}
	name := fmt.Sprintf("%s: revision %s", shown, cmp.Or(sum.Revision, "(none)"))
	if len(sum.Roots) > 0 {
		name += ", roots " + strings.Join(sum.Roots, ", ")
	}
	return raw, name, nil
}

func countsOf(s outcome.Summary) DryRunCounts {
	return DryRunCounts{Clusters: s.Clusters, TurnedBlocked: len(s.TurnedBlocked), TurnedUnknown: len(s.TurnedUnknown),
		TurnedReady: len(s.TurnedReady), Changed: len(s.Changed), NewBlockers: len(s.NewBlockers),
		CandidateErrors: len(s.CandidateErrors), Unjudged: len(s.Unjudged), Skipped: len(s.Skipped)}
}

// changesOf is every cluster not judged and every target a judged cluster changes at,
// worst first (changeRank), then by cluster and target.
func changesOf(results []outcome.Result) []DryRunChange {
	var out []DryRunChange
	for _, r := range results {
		if r.Error != "" {
			out = append(out, DryRunChange{Cluster: clip(r.Cluster, maxLine), Error: clip(r.Error, maxLine), CandidateError: r.Candidate})
			continue
		}
		for _, d := range r.Targets {
			if d.Turned() == "" && len(d.New)+len(d.Changed)+len(d.Resolved)+len(d.NewBlockers) == 0 {
				continue
			}
			c := DryRunChange{Cluster: clip(r.Cluster, maxLine), Target: d.Target, To: d.After.Verdict, New: len(d.New), Resolved: len(d.Resolved)}
			if d.Before != nil {
				c.From = d.Before.Verdict
			}
			c.NewBlockers = firstFew(d.NewBlockers, 3, maxLine)
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b DryRunChange) int {
		return cmp.Or(cmp.Compare(changeRank(a), changeRank(b)), strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Target, b.Target))
	})
	return out
}

// changeRank orders changes by who must look first: the candidate failing, a cluster not
// judged, turning blocked, gaining a blocker, turning unknown, other changes, turning ready.
func changeRank(c DryRunChange) int {
	turned := c.From != c.To
	switch {
	case c.CandidateError:
		return 0
	case c.Error != "":
		return 1
	case turned && c.To == report.VerdictBlocked:
		return 2
	case len(c.NewBlockers) > 0:
		return 3
	case turned && c.To == report.VerdictUnknown:
		return 4
	case turned && c.To == report.VerdictReady:
		return 6
	}
	return 5
}

// dryRun is a dry run's answer, kept for its pages.
type dryRun struct {
	head    DryRunAnswer
	changes []DryRunChange
}

func (r *dryRun) keptAs(id string) { r.head.Run = id }

// page is the answer holding the changes from at on, as many as fit.
func (r *dryRun) page(at int) DryRunAnswer {
	a := r.head
	a.Total, a.First = len(r.changes), min(at, len(r.changes))
	return pageOf(r.changes, a.First, dryRunPage{Run: a.Run}, func(shown []DryRunChange, next string) DryRunAnswer {
		b := a
		b.Changes, b.Next = shown, next
		return b
	})
}

// dryRuns keeps the last dry runs of every session by id.
type dryRuns struct{ kept lastKept[*dryRun] }

var dryRunsKept = keepBounds{prefix: "dry-run", perSession: maxDryRunsKept, all: maxDryRunsInAll}

// add keeps r for ctx's session under a new id.
func (d *dryRuns) add(ctx context.Context, r *dryRun) { d.kept.add(ctx, r, dryRunsKept) }

// get is the dry run of ctx's session id names.
func (d *dryRuns) get(ctx context.Context, id string) (*dryRun, error) {
	if r, ok := d.kept.get(ctx, id); ok && id != "" {
		return r, nil
	}
	return nil, fmt.Errorf("dry run %q is not kept in this session (its last %d are): run dry_run_bundle again", clip(id, 40), maxDryRunsKept)
}
