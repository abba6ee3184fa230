package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/report"
)

// FindingsQuery chooses a report and the findings of it to list.
type FindingsQuery struct {
	Scan     string `json:"scan,omitempty" jsonschema:"a scan's id (default: the latest scan)"`
	Cluster  string `json:"cluster,omitempty" jsonschema:"a fleet cluster's name, read from the fleet server instead of a scan"`
	Target   string `json:"target,omitempty" jsonschema:"only findings at this minor, one the report was judged at, e.g. 1.37"`
	Severity string `json:"severity,omitempty" jsonschema:"only findings of this severity"`
	Category string `json:"category,omitempty" jsonschema:"only this category, e.g. removed-api"`
	Team     string `json:"team,omitempty" jsonschema:"only findings this team owns"`
}

// ListFindingsInput is list_findings' input: a query, or the cursor of a previous page.
type ListFindingsInput struct {
	FindingsQuery
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer; the query travels in it"`
}

// findingsCursor is what list_findings' next carries: the query with the scan it read
// named, so a later scan does not change the pages, and for a fleet cluster, whose report
// is read again for each page, the state of the findings paged.
type findingsCursor struct {
	FindingsQuery
	State string `json:"state,omitempty"`
}

// FindingsAnswer is one page of findings, one line each.
type FindingsAnswer struct {
	Source     string        `json:"source"`
	JudgedWith []string      `json:"judgedWith"`
	Total      int           `json:"total" jsonschema:"findings matching the query"`
	First      int           `json:"first" jsonschema:"index of the first finding shown"`
	Findings   []FindingLine `json:"findings"`
	Next       string        `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// severityEnum are the severities a finding has, as an input schema offers them.
var severityEnum = []any{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo}

var listFindingsTool = &mcp.Tool{
	Name:  "list_findings",
	Title: "List findings",
	Description: "List the findings of a scan (default: the latest) or of a fleet cluster, filtered by target, severity, category and team, " +
		"one line each, paged: pass the answer's next as cursor for more.",
	InputSchema: schemaFor[ListFindingsInput](func(s *jsonschema.Schema) { s.Properties["severity"].Enum = severityEnum }),
}

func (s *Server) listFindings(ctx context.Context, in ListFindingsInput) (FindingsAnswer, error) {
	c, at := findingsCursor{FindingsQuery: in.FindingsQuery}, 0
	if in.Cursor != "" {
		var err error
		if c, at, err = decodeCursor[findingsCursor](in.Cursor); err != nil {
			return FindingsAnswer{}, err
		}
	}
	q := c.FindingsQuery
	target, err := targetInput(q.Target)
	if err != nil {
		return FindingsAnswer{}, err
	}
	q.Target = target
	sc, err := s.reportAt(ctx, q.Scan, q.Cluster, q.Target)
	if err != nil {
		return FindingsAnswer{}, err
	}
	if err := judgedAt(sc, q); err != nil {
		return FindingsAnswer{}, err
	}
	var all []*report.Finding
	for _, t := range sc.rep.Targets {
		for i := range t.Findings {
			if q.matches(t.Findings[i]) {
				all = append(all, &t.Findings[i])
			}
		}
	}
	next := findingsCursor{FindingsQuery: q}
	if q.Cluster == "" {
		next.Scan = sc.id
	} else {
		next.State = listState(all, func(f *report.Finding) string { return jsonOf(line(*f)) })
		if in.Cursor != "" && c.State != next.State {
			return FindingsAnswer{}, errFleetChanged
		}
	}
	a := FindingsAnswer{Source: clip(sc.source, maxLine), JudgedWith: judgedWith(sc.rep), Total: len(all), First: min(at, len(all))}
	lines := []FindingLine{} // made as fit asks for them: a page's worth, not the report's
	return pageOf(all, a.First, next, func(shown []*report.Finding, next string) FindingsAnswer {
		for len(lines) < len(shown) {
			lines = append(lines, line(*shown[len(lines)]))
		}
		b := a
		b.Findings, b.Next = lines[:len(shown)], next
		return b
	}), nil
}

func (q FindingsQuery) matches(f report.Finding) bool {
	return (q.Target == "" || f.Target == q.Target) && (q.Severity == "" || f.Severity == q.Severity) &&
		(q.Category == "" || f.Category == q.Category) && (q.Team == "" || slices.Contains(f.Teams, q.Team))
}

// judgedAt refuses q's target when sc was not judged there: a filter that cannot match
// would answer no findings, as if there were none.
func judgedAt(sc *scanned, q FindingsQuery) error {
	if q.Target == "" {
		return nil
	}
	var targets []string
	for _, t := range sc.rep.Targets {
		if t.Target == q.Target {
			return nil
		}
		targets = append(targets, t.Target)
	}
	if q.Cluster != "" {
		return fmt.Errorf("target %s: the report of fleet cluster %s is at %s", q.Target, clip(q.Cluster, maxLine), strings.Join(targets, ", "))
	}
	return fmt.Errorf("target %s: %s was judged at %s only; give one of those, or scan again with %s among the targets",
		q.Target, sc.id, strings.Join(targets, ", "), q.Target)
}

// reportAt is the report a tool reads: a kept scan of the session (scan "" the latest),
// or a fleet cluster's report at target ("" its next minor). A scan holds every target it
// judged, a cluster's report only the one asked for.
func (s *Server) reportAt(ctx context.Context, scan, cluster, target string) (*scanned, error) {
	switch {
	case cluster == "":
		return s.scans.get(ctx, scan)
	case scan != "":
		return nil, errors.New("name a scan or a cluster, not both")
	}
	return s.clusterReport(ctx, cluster, target)
}
