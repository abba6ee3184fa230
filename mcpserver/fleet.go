package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
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

// errFleetChanged answers a page of a fleet read whose list is not the first page's: the
// fleet is read again for each page, and paging on would skip or repeat what moved.
var errFleetChanged = errors.New("the fleet changed since the first page (a push or a re-evaluation): ask again without cursor")

// clusterReport is the report of the fleet cluster named name at target ("" its next
// minor): the server's stored evaluation of its latest snapshot, or one it makes for the
// read (a team-scoped token's always is, holding its teams' objects only).
func (s *Server) clusterReport(ctx context.Context, name, target string) (*scanned, error) {
	fc, err := s.fleet()
	if err != nil {
		return nil, err
	}
	if target, err = targetInput(target); err != nil {
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
	var refused *client.Error
	if errors.As(err, &refused) && refused.StatusCode == http.StatusUnprocessableEntity {
		d, _ := fc.Cluster(ctx, clusters[i].ID) // for the targets to offer; without, none are
		return nil, targetRefused(clusters[i], target, d)
	}
	if err != nil {
		return nil, fmt.Errorf("read the report of fleet cluster %s: %w", clip(name, maxLine), err)
	}
	return &scanned{source: reportSource(r), rep: r.Report}, nil
}

// targetRefused says, in the tool's input, what target to give for cluster c, whose report
// the server refused at target ("" its next minor): the server's own words name its query
// parameter. d is the cluster's detail, for the targets the fleet judges it at; nil when
// it could not be read.
func targetRefused(c api.Cluster, target string, d *api.ClusterDetail) error {
	current, err := inventory.ParseVersion(c.ServerVersion)
	known := err == nil
	why := "cannot be judged at " + target
	switch {
	case target == "":
		why = "has no next minor: its agent reported no Kubernetes version"
	case known:
		why = fmt.Sprintf("runs %s: %s is no later minor", current.MinorString(), target)
	}
	var offered []string
	if d != nil {
		for _, t := range d.Targets {
			if v, err := inventory.ParseVersion(t); err == nil && (!known || v.LaterMinor(current)) {
				offered = append(offered, t)
			}
		}
	}
	give := `give the minor to judge it at, as "target": "1.NN"`
	if len(offered) > 0 {
		give = fmt.Sprintf(`give the minor to judge it at, e.g. "target": %q (the fleet judges it at %s)`, offered[0], strings.Join(offered, ", "))
	}
	return fmt.Errorf("fleet cluster %s %s; %s", clip(c.Name, maxLine), why, give)
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

// targetInput is a target an assistant gave, as the minor it names; "" when none was.
func targetInput(t string) (string, error) {
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

// serverBundles names the bundles the server judges with: "rules 2026-12-02.5".
func serverBundles(bs []api.Bundle) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, bundleLine(b.Name, b.Revision))
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

// fleetSummaryCursor is what fleet_summary's next carries: the target and the state of
// the clusters paged.
type fleetSummaryCursor struct {
	Target string `json:"target,omitempty"`
	State  string `json:"state"`
}

// FleetSummary is the fleet at one target: every cluster counted where it stands, then the
// clusters one line each, those who must act first.
type FleetSummary struct {
	Source     string          `json:"source"`
	JudgedWith []string        `json:"judgedWith" jsonschema:"the bundles and their revisions the server judges with"`
	Counts     api.FleetCounts `json:"counts" jsonschema:"every cluster the read token sees, in exactly one of ready, blocked, unknown, alreadyThere and notEvaluated"`
	Pending    int             `json:"reevaluationPending,omitempty" jsonschema:"clusters the server has not yet judged again with its current bundles"`
	First      int             `json:"first" jsonschema:"index of the first cluster shown"`
	Clusters   []ClusterLine   `json:"clusters" jsonschema:"blocked clusters first, then unknown, not evaluated, ready and already there; by name within each"`
	Next       string          `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// ClusterLine is a fleet cluster in one line.
type ClusterLine struct {
	Name          string   `json:"name"`
	Version       string   `json:"version,omitempty" jsonschema:"the Kubernetes version it runs; absent when its agent did not say"`
	Target        string   `json:"target,omitempty" jsonschema:"the minor it is judged at"`
	Standing      string   `json:"standing" jsonschema:"blocked, unknown (something could not be assessed), not-evaluated, ready or already-there"`
	Blockers      int      `json:"blockers,omitempty"`
	TopBlocker    string   `json:"topBlocker,omitempty" jsonschema:"the title of its blocker naming the most objects"`
	TopBlockerKey string   `json:"topBlockerKey,omitempty" jsonschema:"that blocker's key, for explain_finding with this cluster and target"`
	Cause         string   `json:"cause,omitempty" jsonschema:"for an unknown verdict, what was not assessed"`
	Teams         []string `json:"teams,omitempty" jsonschema:"the teams owning its blockers; (unattributed) when some blocker is no team's"`
	Stale         bool     `json:"stale,omitempty" jsonschema:"its agent has not pushed lately"`
	Outdated      bool     `json:"outdated,omitempty" jsonschema:"its evaluation is not its judgement now (other bundles, or an older snapshot)"`
}

var fleetSummaryTool = &mcp.Tool{
	Name:  "fleet_summary",
	Title: "Fleet readiness",
	Description: "Where every fleet cluster the read token sees stands at a target (default: each cluster's next minor): " +
		"counts of ready, blocked, unknown, already there and not evaluated, then one line per cluster, blocked and unknown first, " +
		"with its top blocker and owning teams. Read from the fleet server (--server); paged: pass the answer's next as cursor.",
}

func (s *Server) fleetSummary(ctx context.Context, in FleetSummaryInput) (FleetSummary, error) {
	c, at := fleetSummaryCursor{Target: in.Target}, 0
	if in.Cursor != "" {
		var err error
		if c, at, err = decodeCursor[fleetSummaryCursor](in.Cursor); err != nil {
			return FleetSummary{}, err
		}
	}
	fc, err := s.fleet()
	if err != nil {
		return FleetSummary{}, err
	}
	target, err := targetInput(c.Target)
	if err != nil {
		return FleetSummary{}, err
	}
	f, err := fc.Fleet(ctx, target)
	if err != nil {
		return FleetSummary{}, fmt.Errorf("read the fleet: %w", err)
	}
	all := clusterLines(f.Clusters)
	next := fleetSummaryCursor{Target: target, State: listState(all, func(l ClusterLine) string { return jsonOf(l) })}
	if in.Cursor != "" && c.State != next.State {
		return FleetSummary{}, errFleetChanged
	}
	a := FleetSummary{Source: fleetAt(target), JudgedWith: serverBundles(f.Bundles), Counts: f.Counts,
		Pending: f.Reevaluation.Pending, First: min(at, len(all))}
	return pageOf(all, a.First, next, func(shown []ClusterLine, next string) FleetSummary {
		b := a
		b.Clusters, b.Next = shown, next
		return b
	}), nil
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
			l.TopBlocker, l.TopBlockerKey = clip(st.TopBlocker.Title, maxLine), clip(st.TopBlocker.Key, maxLine)
		}
		if st.Status == api.StandingBlocked {
			l.Teams = firstFew(st.Teams, 3, maxTeam)
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b ClusterLine) int { return cmp.Compare(standingOrder[a.Standing], standingOrder[b.Standing]) })
	return out
}
