package client

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/upgradescope/upgradescope/fleet/api"
)

// Clusters lists the clusters the token may read (GET /api/v1/clusters). An answer without
// a clusters list is an error: the base URL is then no fleet server's. (The server never
// sends null, and JSON's [] decodes to an empty slice, not nil: only an absent or null list
// leaves Clusters nil.)
func (c *Client) Clusters(ctx context.Context) ([]api.Cluster, error) {
	var answer api.ClusterList
	if err := c.do(ctx, http.MethodGet, nil, http.StatusOK, &answer, "api", "v1", "clusters"); err != nil {
		return nil, err
	}
	if answer.Clusters == nil {
		return nil, fmt.Errorf("GET %s: the answer has no clusters list: is %s an upgradescope server?", c.endpoint("api", "v1", "clusters"), c.labels.Server)
	}
	return answer.Clusters, nil
}

// Cluster reads one cluster with its evaluations and latest snapshot (GET
// /api/v1/clusters/{id}); an unknown id, or one out of the token's scope, is ErrNotFound.
func (c *Client) Cluster(ctx context.Context, id int64) (*api.ClusterDetail, error) {
	var out api.ClusterDetail
	if err := c.do(ctx, http.MethodGet, nil, http.StatusOK, &out, clusterPath(id)...); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteCluster deletes a cluster with its snapshots, evaluations and ingest tokens (DELETE
// /api/v1/clusters/{id}, the admin token's); an unknown id is ErrNotFound.
func (c *Client) DeleteCluster(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, nil, http.StatusNoContent, nil, clusterPath(id)...)
}

// RenameCluster renames a cluster (PATCH /api/v1/clusters/{id}, the admin token's) and
// answers it renamed; an unknown id is ErrNotFound, a name another cluster holds
// ErrConflict.
func (c *Client) RenameCluster(ctx context.Context, id int64, name string) (api.Cluster, error) {
	var out api.Cluster
	err := c.do(ctx, http.MethodPatch, api.Rename{Name: name}, http.StatusOK, &out, clusterPath(id)...)
	return out, err
}

func clusterPath(id int64) []string {
	return []string{"api", "v1", "clusters", strconv.FormatInt(id, 10)}
}
