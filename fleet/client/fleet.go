package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/upgradescope/upgradescope/fleet/api"
)

// Fleet reads the fleet the token may read (GET /api/v1/fleet): every cluster by name with
// a cell per target the server plans, the bundles it judges with, and the clusters counted
// where they stand at target ("" is each cluster's next minor). An answer without a
// clusters list is an error: the base URL is then no fleet server's.
func (c *Client) Fleet(ctx context.Context, target string) (*api.Fleet, error) {
	q := url.Values{}
	if target != "" {
		q.Set("target", target)
	}
	var out api.Fleet
	path := []string{"api", "v1", "fleet"}
	if err := c.doQuery(ctx, http.MethodGet, nil, q, http.StatusOK, &out, path...); err != nil {
		return nil, err
	}
	if out.Clusters == nil {
		return nil, c.notAFleetServer(path, "clusters")
	}
	return &out, nil
}

// FindingsQuery chooses the fleet's findings to read: at Target ("" each cluster's next
// minor), owned by Team (report.Unattributed: owned by none), of Category and Severity
// (blocker or warning; "" both). Empty fields filter nothing.
type FindingsQuery struct {
	Target, Team, Category, Severity string
}

func (q FindingsQuery) values() url.Values {
	v := url.Values{}
	for name, value := range map[string]string{"target": q.Target, "team": q.Team, "category": q.Category, "severity": q.Severity} {
		if value != "" {
			v.Set(name, value)
		}
	}
	return v
}

// FleetFindings reads each finding key once across the clusters the token may read (GET
// /api/v1/fleet/findings), most clusters blocked first, with the clusters whose stored
// report could not be read named in Unreadable. An answer without a findings list is an
// error: the base URL is then no fleet server's.
func (c *Client) FleetFindings(ctx context.Context, q FindingsQuery) (*api.FleetFindings, error) {
	var out api.FleetFindings
	path := []string{"api", "v1", "fleet", "findings"}
	if err := c.doQuery(ctx, http.MethodGet, nil, q.values(), http.StatusOK, &out, path...); err != nil {
		return nil, err
	}
	if out.Findings == nil {
		return nil, c.notAFleetServer(path, "findings")
	}
	return &out, nil
}

// notAFleetServer is the error of a 200 answer at path without its list.
func (c *Client) notAFleetServer(path []string, list string) error {
	return fmt.Errorf("GET %s: the answer has no %s list: is %s an upgradescope server?", c.endpoint(path...), list, c.labels.Server)
}
