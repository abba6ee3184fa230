package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/inventory"
)

// The fleet tools read a fleet server through its API (fleet/client) with the read token
// given at start, never its database: they see what the token is scoped to, and the
// server's judgement as it stored it.

// errNoFleet answers a fleet tool of a server started without --server.
var errNoFleet = errors.New("no fleet server: start upgradescope mcp with --server URL and --read-token-file FILE " +
	"(a read token made with upgradescope tokens create --read; one scoped to teams sees those teams only)")

// fleet is the fleet client, or errNoFleet.
func (s *Server) fleet() (*client.Client, error) {
	if s.cfg.Fleet == nil {
		return nil, errNoFleet
	}
	return s.cfg.Fleet, nil
}

// clusterReport is a fleet cluster's report at its next minor, read with the read token.
func (s *Server) clusterReport(ctx context.Context, name string) (*scanned, error) {
	return s.clusterReportAt(ctx, name, "")
}

// reportAt is reportFor with a fleet cluster's report read at target ("" its next minor):
// a scan holds every target it judged, a cluster's report only the one asked for.
func (s *Server) reportAt(ctx context.Context, scan, cluster, target string) (*scanned, error) {
	if cluster == "" || scan != "" {
		return s.reportFor(ctx, scan, cluster)
	}
	return s.clusterReportAt(ctx, cluster, target)
}

// clusterReportAt is the report of the fleet cluster named name at target ("" its next
// minor): the server's stored evaluation of its latest snapshot, or one it makes for the
// read (a team-scoped token's always is, holding its teams' objects only).
func (s *Server) clusterReportAt(ctx context.Context, name, target string) (*scanned, error) {
	fc, err := s.fleet()
	if err != nil {
		return nil, err
	}
	if target, err = fleetTarget(target); err != nil {
		return nil, err
	}
	clusters, err := fc.Clusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the fleet's clusters: %w", err)
	}
	i := slices.IndexFunc(clusters, func(c api.Cluster) bool { return c.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("no fleet cluster named %q that the read token sees: fleet_summary lists them", clip(name, maxLine))
	}
	r, err := fc.Report(ctx, clusters[i].ID, target)
	if err != nil {
		return nil, fmt.Errorf("read the report of fleet cluster %s: %w", clip(name, maxLine), err)
	}
	return &scanned{source: reportSource(r), rep: r.Report}, nil
}

// reportSource names a fleet report: the cluster, the snapshot, when it was judged, and
// whether the server stored that judgement.
func reportSource(r *api.ClusterReport) string {
	s := fmt.Sprintf("fleet cluster %s (snapshot %d, evaluated at %s", r.ClusterName, r.SnapshotID, r.EvaluatedAt.UTC().Format(time.RFC3339))
	if r.Source == api.SourceWhatIf {
		s += ", judged for this read and not stored"
	}
	if r.Outdated {
		s += "; outdated: the server has not judged it again with its current bundles yet"
	}
	return s + ")"
}

// fleetTarget checks a target an assistant gave as the server reads one, "" each
// cluster's next minor.
func fleetTarget(t string) (string, error) {
	if t = strings.TrimSpace(t); t == "" {
		return "", nil
	}
	minor, err := inventory.ParseTarget(t)
	if err != nil {
		return "", fmt.Errorf("target: %w", err)
	}
	return minor, nil
}

// fleetAt names the fleet read at target.
func fleetAt(target string) string {
	if target == "" {
		return "the fleet as the read token sees it, each cluster at its next minor"
	}
	return "the fleet as the read token sees it, at " + target
}

// serverBundles names the bundles the server judges with: "rules 2026-12-01.6".
func serverBundles(bs []api.Bundle) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, clip(b.Name+" "+b.Revision, maxLine))
	}
	return out
}

// standingOrder lists clusters who must act first: blocked, then unknown.
var standingOrder = map[string]int{api.StandingBlocked: 0, api.StandingUnknown: 1, api.StandingNotEvaluated: 2,
	api.StandingReady: 3, api.StandingAlreadyThere: 4}

// FleetSummaryInput is fleet_summary's input.
type FleetSummaryInput struct {
	Target string `json:"target,omitempty" jsonschema:"the minor to judge every cluster at, e.g. 1.37 (default: each cluster's next minor)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer; the target travels in it"`
}

// FleetSummary is the fleet at one target: every cluster counted where it stands, then the
// clusters one line each, those who must act first.
type FleetSummary struct {
	Source     string          `json:"source"`
	JudgedWith []string        `json:"judgedWith" jsonschema:"the bundles and their revisions the server judges with"`
	Counts     api.FleetCounts `json:"counts" jsonschema:"every cluster the read token sees, in exactly one of ready, blocked, unknown, alreadyThere and notEvaluated"`
	Pending    int             `json:"reevaluationPending,omitempty" jsonschema:"clusters the server has not yet judged again with its current bundles"`
	From       int             `json:"from" jsonschema:"index of the first cluster shown"`
	Clusters   []ClusterLine   `json:"clusters" jsonschema:"blocked clusters first, then unknown, not evaluated, ready and already there; by name within each"`
	Next       string          `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// ClusterLine is a fleet cluster in one line.
type ClusterLine struct {
	Name       string   `json:"name"`
	Version    string   `json:"version,omitempty" jsonschema:"the Kubernetes version it runs; absent when its agent did not say"`
	Target     string   `json:"target,omitempty" jsonschema:"the minor it is judged at"`
	Standing   string   `json:"standing" jsonschema:"blocked, unknown (something could not be assessed), not-evaluated, ready or already-there"`
	Blockers   int      `json:"blockers,omitempty"`
	TopBlocker string   `json:"topBlocker,omitempty" jsonschema:"the title of its blocker naming the most objects"`
	Cause      string   `json:"cause,omitempty" jsonschema:"for an unknown verdict, what was not assessed"`
	Teams      []string `json:"teams,omitempty" jsonschema:"the teams owning its blockers; (unattributed) when some blocker is no team's"`
	Stale      bool     `json:"stale,omitempty" jsonschema:"its agent has not pushed lately"`
	Outdated   bool     `json:"outdated,omitempty" jsonschema:"its evaluation is not its judgement now (other bundles, or an older snapshot)"`
}

var fleetSummaryTool = &mcp.Tool{
	Name:  "fleet_summary",
	Title: "Fleet readiness",
	Description: "Where every fleet cluster the read token sees stands at a target (default: each cluster's next minor): " +
		"counts of ready, blocked, unknown, already there and not evaluated, then one line per cluster, blocked and unknown first, " +
		"with its top blocker and owning teams. Read from the fleet server (--server); paged: pass the answer's next as cursor.",
}

func (s *Server) fleetSummary(ctx context.Context, in FleetSummaryInput) (FleetSummary, error) {
	q, at := in, 0
	if in.Cursor != "" {
		var err error
		if q, at, err = decodeCursor[FleetSummaryInput](in.Cursor); err != nil {
			return FleetSummary{}, err
		}
	}
	fc, err := s.fleet()
	if err != nil {
		return FleetSummary{}, err
	}
	target, err := fleetTarget(q.Target)
	if err != nil {
		return FleetSummary{}, err
	}
	f, err := fc.Fleet(ctx, target)
	if err != nil {
		return FleetSummary{}, fmt.Errorf("read the fleet: %w", err)
	}
	all := clusterLines(f.Clusters)
	a := FleetSummary{Source: fleetAt(target), JudgedWith: serverBundles(f.Bundles), Counts: f.Counts,
		Pending: f.Reevaluation.Pending, From: min(at, len(all))}
	rest := all[a.From:]
	page := func(n int) FleetSummary {
		b := a
		b.Clusters = rest[:n]
		if a.From+n < len(all) {
			b.Next = encodeCursor(FleetSummaryInput{Target: target}, a.From+n)
		}
		return b
	}
	a = page(fit(rest, func(n int) any { return page(n) }))
	if a.Clusters == nil {
		a.Clusters = []ClusterLine{}
	}
	return a, nil
}

// clusterLines are the fleet's rows where the server counts them (each row's standing, as
// the fleet page shows it), one line each, those who must act first.
func clusterLines(rows []api.FleetRow) []ClusterLine {
	out := make([]ClusterLine, 0, len(rows))
	for _, row := range rows {
		st := row.Standing
		l := ClusterLine{Name: clip(row.Name, maxLine), Version: clip(row.ServerVersion, 40), Target: st.Target, Standing: st.Status,
			Blockers: st.Blockers, Cause: clip(st.Cause, maxLine), Stale: row.Stale}
		if cell := row.Cells[st.Target]; cell != nil {
			l.Outdated = cell.Outdated
		}
		if st.TopBlocker != nil {
			l.TopBlocker = clip(st.TopBlocker.Title, maxLine)
		}
		if st.Status == api.StandingBlocked {
			l.Teams = shownTeams(st.Teams)
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b ClusterLine) int { return cmp.Compare(standingOrder[a.Standing], standingOrder[b.Standing]) })
	return out
}

// firstThree is names, the first three named and the rest counted.
func firstThree(names []string) []string {
	if len(names) <= 3 {
		return names
	}
	return append(slices.Clone(names[:3]), fmt.Sprintf("+%d", len(names)-3))
}
