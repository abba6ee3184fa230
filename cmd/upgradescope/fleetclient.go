package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// fleetClient is the fleet client of a command with --server: its token read from the
// tokenName flags, its errors naming the command's flags, and a warning printed when the
// token would travel in clear text.
func fleetClient(s streams, server, caFile string, token tokenFlag, tokenName string, opts ...client.Option) (*client.Client, error) {
	tok, err := token.value(tokenName)
	if err != nil {
		return nil, err
	}
	labels := client.Labels{Server: "--server", CAFile: "--server-ca-file", Token: "--" + tokenName, TokenFile: "--" + tokenName + "-file"}
	opts = append([]client.Option{client.WithToken(tok), client.WithCAFile(caFile), client.WithLabels(labels)}, opts...)
	c, err := client.New(server, opts...)
	if err != nil {
		return nil, err
	}
	if w := c.Warning(); w != "" {
		fmt.Fprintln(s.err, "upgradescope: warning:", w)
	}
	return c, nil
}

// serverBackend is a clusterBackend on a fleet server's API.
type serverBackend struct{ c *client.Client }

func (b serverBackend) list(ctx context.Context) ([]clusterListing, error) {
	cs, err := b.c.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]clusterListing, 0, len(cs))
	for _, c := range cs {
		out = append(out, fromAPI(c))
	}
	return out, nil
}

func (b serverBackend) delete(ctx context.Context, id int64) error { return b.c.DeleteCluster(ctx, id) }

func (b serverBackend) rename(ctx context.Context, id int64, name string) (clusterListing, error) {
	c, err := b.c.RenameCluster(ctx, id, name)
	return fromAPI(c), err
}

func fromAPI(c api.Cluster) clusterListing {
	return clusterListing{ID: c.ID, Name: c.Name, ClusterUID: c.ClusterUID, FirstSeen: c.FirstSeen, LastSeen: c.LastSeen,
		ServerVersion: c.ServerVersion, LatestSnapshotID: c.LatestSnapshotID, Stale: &c.Stale}
}

// isNotFound and isConflict read both backends' answers alike: the store's errors, and a
// server's 404 and 409.
func isNotFound(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, client.ErrNotFound)
}

func isConflict(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, client.ErrConflict)
}
