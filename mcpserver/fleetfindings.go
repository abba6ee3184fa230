package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/report"
)

// FleetFindingsQuery chooses the fleet's findings to list.
type FleetFindingsQuery struct {
	Target   string `json:"target,omitempty" jsonschema:"the minor, e.g. 1.37 (default: each cluster's next minor)"`
	Team     string `json:"team,omitempty" jsonschema:"only findings this team owns; (unattributed) for those no team owns"`
	Category string `json:"category,omitempty" jsonschema:"only this category, e.g. removed-api"`
	Severity string `json:"severity,omitempty" jsonschema:"blocker or warning (default: both)"`
}

// FleetFindingsInput is fleet_findings' input: a query, or the cursor of a previous page.
type FleetFindingsInput struct {
	FleetFindingsQuery
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer; the query travels in it"`
}

// fleetFindingsCursor is what fleet_findings' next carries: the query and the state of the
// findings paged.
type fleetFindingsCursor struct {
	FleetFindingsQuery
	State string `json:"state"`
}

// FleetFindingsAnswer is one page of the fleet's findings, each key once, one line each.
type FleetFindingsAnswer struct {
	Source     string             `json:"source"`
	JudgedWith []string           `json:"judgedWith" jsonschema:"the bundles and their revisions the server judges with"`
	Counts     api.FleetCounts    `json:"counts" jsonschema:"every cluster the read token sees, where it stands at the target"`
	Total      int                `json:"total" jsonschema:"finding keys matching the query"`
	First      int                `json:"first" jsonschema:"index of the first finding shown"`
	Findings   []FleetFindingLine `json:"findings" jsonschema:"most clusters blocked first"`
	Unreadable []string           `json:"unreadable,omitempty" jsonschema:"clusters whose stored report could not be read: their findings are missing here"`
	Next       string             `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// FleetFindingLine is one finding key across the fleet in one line.
type FleetFindingLine struct {
	Key             string   `json:"key"`
	Title           string   `json:"title"`
	Category        string   `json:"category"`
	Severity        string   `json:"severity" jsonschema:"the worst any cluster has it at"`
	ClustersBlocked int      `json:"clustersBlocked"`
	Clusters        []string `json:"clusters" jsonschema:"the clusters it affects, those it blocks first; past three, counted"`
	Objects         int      `json:"objects" jsonschema:"objects it names, summed over the clusters"`
	Teams           []string `json:"teams,omitempty" jsonschema:"teams owning those objects; past three, counted"`
}

var fleetFindingsTool = &mcp.Tool{
	Name:  "fleet_findings",
	Title: "Fleet findings",
	Description: "Each finding key once across the fleet clusters the read token sees, at a target (default: each cluster's next minor), " +
		"filtered by team, category and severity: how many clusters it blocks, the clusters, teams and objects, one line each, " +
		"most clusters blocked first. Read from the fleet server (--server); paged: pass the answer's next as cursor. " +
		"list_findings {\"cluster\": NAME} reads one cluster's findings.",
	InputSchema: schemaFor[FleetFindingsInput](func(s *jsonschema.Schema) {
		s.Properties["severity"].Enum = []any{report.SeverityBlocker, report.SeverityWarning}
	}),
}

func (s *Server) fleetFindings(ctx context.Context, in FleetFindingsInput) (FleetFindingsAnswer, error) {
	c, at := fleetFindingsCursor{FleetFindingsQuery: in.FleetFindingsQuery}, 0
	if in.Cursor != "" {
		var err error
		if c, at, err = decodeCursor[fleetFindingsCursor](in.Cursor); err != nil {
			return FleetFindingsAnswer{}, err
		}
	}
	q := c.FleetFindingsQuery
	fc, err := s.fleet()
	if err != nil {
		return FleetFindingsAnswer{}, err
	}
	if q.Target, err = targetInput(q.Target); err != nil {
		return FleetFindingsAnswer{}, err
	}
	ff, err := fc.FleetFindings(ctx, client.FindingsQuery{Target: q.Target, Team: q.Team, Category: q.Category, Severity: q.Severity})
	if err != nil {
		return FleetFindingsAnswer{}, fmt.Errorf("read the fleet's findings: %w", err)
	}
	all := make([]FleetFindingLine, 0, len(ff.Findings))
	for _, x := range ff.Findings {
		all = append(all, fleetLine(x))
	}
	next := fleetFindingsCursor{FleetFindingsQuery: q, State: listState(all, func(l FleetFindingLine) string { return jsonOf(l) })}
	if in.Cursor != "" && c.State != next.State {
		return FleetFindingsAnswer{}, errFleetChanged
	}
	a := FleetFindingsAnswer{Source: fleetAt(q.Target), JudgedWith: serverBundles(ff.Bundles), Counts: ff.Counts,
		Total: len(all), First: min(at, len(all)), Unreadable: firstFew(ff.Unreadable, 5, maxLine)}
	return pageOf(all, a.First, next, func(shown []FleetFindingLine, next string) FleetFindingsAnswer {
		b := a
		b.Findings, b.Next = shown, next
		return b
	}), nil
}

func fleetLine(f api.FleetFinding) FleetFindingLine {
	names := make([]string, 0, len(f.Clusters))
	for _, c := range f.Clusters {
		names = append(names, c.Name)
	}
	return FleetFindingLine{Key: clip(f.Key, maxLine), Title: clip(f.Title, maxLine), Category: clip(f.Category, maxLine),
		Severity: f.Severity, ClustersBlocked: f.ClustersBlocked, Clusters: firstFew(names, 3, maxLine), Objects: f.Objects,
		Teams: firstFew(f.Teams, 3, maxTeam)}
}
