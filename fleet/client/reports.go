package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/upgradescope/upgradescope/fleet/api"
)

// Report reads a cluster's report at target (GET /api/v1/clusters/{id}/report; "" is the
// cluster's next minor): the stored evaluation of its latest snapshot, else one the server
// makes for the read and does not store (Source says which; a team-scoped token's is always
// made for it, holding its teams' objects and those no team owns). An unknown id, or one out
// of the token's scope, is ErrNotFound; a target the cluster already runs is refused (422).
// The report, tens of megabytes for a large cluster, is read within MaxAnswer.
func (c *Client) Report(ctx context.Context, id int64, target string) (*api.ClusterReport, error) {
	q := url.Values{}
	if target != "" {
		q.Set("target", target)
	}
	var out api.ClusterReport
	path := append(clusterPath(id), "report")
	if err := c.doQuery(ctx, http.MethodGet, nil, q, http.StatusOK, &out, path...); err != nil {
		return nil, err
	}
	if out.Report == nil {
		return nil, fmt.Errorf("GET %s: the answer has no report: is %s an upgradescope server?", c.endpoint(path...), c.labels.Server)
	}
	return &out, nil
}
