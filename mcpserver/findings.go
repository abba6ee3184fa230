package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/report"
)

// FindingsQuery chooses a report and the findings of it to list.
type FindingsQuery struct {
	Scan     string `json:"scan,omitempty" jsonschema:"a scan's id (default: the latest scan)"`
	Cluster  string `json:"cluster,omitempty" jsonschema:"a fleet cluster's name, read from the fleet server instead of a scan"`
	Target   string `json:"target,omitempty" jsonschema:"only findings at this minor"`
	Severity string `json:"severity,omitempty" jsonschema:"only blocker, warning or info"`
	Category string `json:"category,omitempty" jsonschema:"only this category, e.g. removed-api"`
	Team     string `json:"team,omitempty" jsonschema:"only findings this team owns"`
}

// ListFindingsInput is list_findings' input: a query, or the cursor of a previous page.
type ListFindingsInput struct {
	FindingsQuery
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer; the query travels in it"`
}

// FindingsAnswer is one page of findings, one line each.
type FindingsAnswer struct {
	Source     string        `json:"source"`
	JudgedWith []string      `json:"judgedWith"`
	Total      int           `json:"total" jsonschema:"findings matching the query"`
	From       int           `json:"from" jsonschema:"index of the first finding shown"`
	Findings   []FindingLine `json:"findings"`
	Next       string        `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

var listFindingsTool = &mcp.Tool{
	Name:  "list_findings",
	Title: "List findings",
	Description: "List the findings of a scan (default: the latest) or of a fleet cluster, filtered by target, severity, category and team, " +
		"one line each, paged: pass the answer's next as cursor for more.",
}

func (s *Server) listFindings(ctx context.Context, in ListFindingsInput) (FindingsAnswer, error) {
	q, at := in.FindingsQuery, 0
	if in.Cursor != "" {
		var err error
		if q, at, err = decodeCursor[FindingsQuery](in.Cursor); err != nil {
			return FindingsAnswer{}, err
		}
	}
	sc, err := s.reportAt(ctx, q.Scan, q.Cluster, q.Target)
	if err != nil {
		return FindingsAnswer{}, err
	}
	var all []FindingLine
	for _, t := range sc.rep.Targets {
		for _, f := range t.Findings {
			if q.matches(f) {
				all = append(all, line(f))
			}
		}
	}
	a := FindingsAnswer{Source: clip(sc.source, maxLine), JudgedWith: judgedWith(sc.rep), Total: len(all), From: min(at, len(all))}
	rest := all[a.From:]
	page := func(n int) FindingsAnswer {
		b := a
		b.Findings = rest[:n]
		if a.From+n < len(all) {
			b.Next = encodeCursor(q, a.From+n)
		}
		return b
	}
	a = page(fit(rest, func(n int) any { return page(n) }))
	if a.Findings == nil {
		a.Findings = []FindingLine{}
	}
	return a, nil
}

func (q FindingsQuery) matches(f report.Finding) bool {
	return (q.Target == "" || f.Target == q.Target) && (q.Severity == "" || f.Severity == q.Severity) &&
		(q.Category == "" || f.Category == q.Category) && (q.Team == "" || slices.Contains(f.Teams, q.Team))
}

// reportFor is the report a paging tool reads: a kept scan, or a fleet cluster's latest.
func (s *Server) reportFor(ctx context.Context, scan, cluster string) (*scanned, error) {
	if cluster != "" {
		if scan != "" {
			return nil, fmt.Errorf("name a scan or a cluster, not both")
		}
		return s.clusterReport(ctx, cluster)
	}
	return s.scans.get(scan)
}
