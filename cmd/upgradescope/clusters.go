package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

func newClustersCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List, delete and rename the clusters the fleet server keeps",
		Long: `clusters works on the fleet server's database directly (--db, --db-url, --db-url-file or
$UPGRADESCOPE_DB_URL), or through a running server with --server URL: list with a read token
(--read-token, --read-token-file or $UPGRADESCOPE_READ_TOKEN), delete and rename with the
server's admin token (--admin-token, --admin-token-file or $UPGRADESCOPE_ADMIN_TOKEN).
A cluster is named by its id or its name; an id wins over a cluster named like it.`,
	}
	cmd.AddCommand(newClustersListCommand(s), newClustersDeleteCommand(s), newClustersRenameCommand(s))
	return cmd
}

// clusterListing is one cluster as clusters list prints it, the same from the database and
// from a server: the listing's own JSON, a subset of the API's api.Cluster. Stale is nil on
// the database: only a server knows its --stale-after.
type clusterListing struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	ClusterUID       string    `json:"clusterUid"`
	FirstSeen        time.Time `json:"firstSeen"`
	LastSeen         time.Time `json:"lastSeen"`
	ServerVersion    string    `json:"serverVersion"`
	LatestSnapshotID int64     `json:"latestSnapshotId"`
	Stale            *bool     `json:"stale,omitempty"`
}

// clusterBackend is where clusters live: the database itself, or a server's API.
type clusterBackend interface {
	list(ctx context.Context) ([]clusterListing, error)
	// delete and rename answer an error isNotFound for an unknown id, and rename one
	// isConflict when the name is taken.
	delete(ctx context.Context, id int64) error
	rename(ctx context.Context, id int64, name string) (clusterListing, error)
}

// clusterFlags name the backend: the dbFlags group, or --server with a token of the role
// the command needs ("read-token" or "admin-token").
type clusterFlags struct {
	db        dbFlags
	server    string
	caFile    string
	token     tokenFlag
	tokenName string
	cmd       *cobra.Command
}

func (f *clusterFlags) register(cmd *cobra.Command, tokenName, env, usage string) {
	f.cmd, f.tokenName = cmd, tokenName
	f.db.register(cmd)
	cmd.Flags().StringVar(&f.server, "server", "", "go through the fleet server at this http(s) URL instead of its database")
	cmd.Flags().StringVar(&f.caFile, "server-ca-file", "", "PEM bundle trusted for an https --server, besides the system roots")
	f.token.register(cmd, tokenName, env, usage)
}

// check refuses flags of both backends, or --server's companions without it.
func (f *clusterFlags) check() error {
	fl := f.cmd.Flags()
	if fl.Changed("server") {
		for _, name := range []string{"db", "db-url", "db-url-file"} {
			if fl.Changed(name) {
				return fmt.Errorf("--server and --%s: give one (--server goes through the fleet server, --%s opens its database)", name, name)
			}
		}
		return nil
	}
	for _, name := range []string{"server-ca-file", f.tokenName, f.tokenName + "-file"} {
		if fl.Changed(name) {
			return fmt.Errorf("--%s goes with --server URL", name)
		}
	}
	return nil
}

// run runs fn on the backend the flags name; a database is closed afterwards.
func (f *clusterFlags) run(cmd *cobra.Command, s streams, fn func(context.Context, clusterBackend) error) error {
	if !f.cmd.Flags().Changed("server") {
		return withStore(cmd, &f.db, func(ctx context.Context, st store.Store) error {
			return fn(ctx, storeBackend{st})
		})
	}
	c, err := fleetClient(s, f.server, f.caFile, f.token, f.tokenName)
	if err != nil {
		return err
	}
	return fn(cmd.Context(), serverBackend{c})
}

func newClustersListCommand(s streams) *cobra.Command {
	var f clusterFlags
	var format listFormat
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List clusters (id, name, UID, server version, last seen, stale)",
		Example: `  upgradescope clusters list --db /var/lib/upgradescope/upgradescope.db
  upgradescope clusters list --server https://fleet.example.com --read-token-file read.token -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.check(); err != nil {
				return err
			}
			if err := f.check(); err != nil {
				return err
			}
			return f.run(cmd, s, func(ctx context.Context, b clusterBackend) error {
				cs, err := b.list(ctx)
				if err != nil {
					return err
				}
				return format.write(s, cs, func() error { return writeClustersTable(s, cs) })
			})
		},
	}
	format.register(cmd)
	f.register(cmd, "read-token", "UPGRADESCOPE_READ_TOKEN", "with --server: a token that reads the fleet")
	return cmd
}

// writeClustersTable shows "-" for what is unknown: no UID or version yet, and staleness on
// the database, where no --stale-after is known.
func writeClustersTable(s streams, cs []clusterListing) error {
	t := newTextTable(s.out, "ID", "NAME", "UID", "SERVER VERSION", "LAST SEEN", "STALE")
	for _, c := range cs {
		stale := "-"
		if c.Stale != nil {
			stale = strconv.FormatBool(*c.Stale)
		}
		t.row(strconv.FormatInt(c.ID, 10), c.Name, orDash(c.ClusterUID), orDash(c.ServerVersion),
			c.LastSeen.UTC().Format(time.RFC3339), stale)
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newClustersDeleteCommand(s streams) *cobra.Command {
	var f clusterFlags
	cmd := &cobra.Command{
		Use:   "delete ID|NAME",
		Short: "Delete a cluster with its snapshots, evaluations and ingest tokens; asks nothing",
		Long: `delete removes the cluster, its snapshots, evaluations and the ingest tokens minted for its
name, without asking: scripts use it. What it deleted is said on stderr. An agent still
running registers the name afresh at its next push, once it has a token that may push as it
(its own tokens went with the cluster).`,
		Example: `  upgradescope clusters delete prod-eu-1
  upgradescope clusters delete 3 --server https://fleet.example.com --admin-token-file admin.token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return f.run(cmd, s, func(ctx context.Context, b clusterBackend) error {
				return deleteCluster(ctx, s, b, args[0])
			})
		},
	}
	f.register(cmd, "admin-token", "UPGRADESCOPE_ADMIN_TOKEN", "with --server: the server's admin token")
	return cmd
}

func deleteCluster(ctx context.Context, s streams, b clusterBackend, arg string) error {
	c, err := resolveCluster(ctx, b, arg)
	if err != nil {
		return err
	}
	err = b.delete(ctx, c.ID)
	if isNotFound(err) {
		// Deleted by someone else since the list.
		return notFound(arg)
	}
	if err != nil {
		return fmt.Errorf("delete cluster %q: %w", arg, err)
	}
	fmt.Fprintf(s.err, "deleted cluster %q (id %d) with its snapshots, evaluations and ingest tokens\n", c.Name, c.ID)
	return nil
}

func newClustersRenameCommand(s streams) *cobra.Command {
	var f clusterFlags
	cmd := &cobra.Command{
		Use:   "rename ID|NAME NEW",
		Short: "Rename a cluster, keeping its history; its ingest tokens push as NEW from then on",
		Long: `rename gives the cluster a new name (an RFC 1123 subdomain), keeping its UID, snapshots and
evaluations; the ingest tokens minted for the old name move to the new one. Its agent must
push as NEW from then on (--cluster-name), or its next push registers the old name afresh.`,
		Example: `  upgradescope clusters rename prod-eu-1 prod-eu-west-1
  upgradescope clusters rename 3 prod-eu-west-1 --server https://fleet.example.com --admin-token-file admin.token`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			// Before touching anything: a name the server would refuse must not half-happen.
			if err := push.CheckClusterName(args[1]); err != nil {
				return fmt.Errorf("rename cluster %q: %w", args[0], err)
			}
			return f.run(cmd, s, func(ctx context.Context, b clusterBackend) error {
				return renameCluster(ctx, s, b, args[0], args[1])
			})
		},
	}
	f.register(cmd, "admin-token", "UPGRADESCOPE_ADMIN_TOKEN", "with --server: the server's admin token")
	return cmd
}

func renameCluster(ctx context.Context, s streams, b clusterBackend, arg, name string) error {
	c, err := resolveCluster(ctx, b, arg)
	if err != nil {
		return err
	}
	renamed, err := b.rename(ctx, c.ID, name)
	switch {
	case isNotFound(err):
		return notFound(arg)
	case isConflict(err):
		return fmt.Errorf("rename cluster %q to %q: another cluster is named %q (see clusters list)", arg, name, name)
	case err != nil:
		return fmt.Errorf("rename cluster %q to %q: %w", arg, name, err)
	}
	fmt.Fprintf(s.err, "renamed cluster %q (id %d) to %q; its ingest tokens moved with it\n", c.Name, c.ID, renamed.Name)
	return nil
}

// resolveCluster finds the cluster arg names: a positive integer is an id first, then a
// name (a name may be all digits); anything else is a name.
func resolveCluster(ctx context.Context, b clusterBackend, arg string) (clusterListing, error) {
	cs, err := b.list(ctx)
	if err != nil {
		return clusterListing{}, fmt.Errorf("find cluster %q: %w", arg, err)
	}
	if id, err := strconv.ParseInt(arg, 10, 64); err == nil && id > 0 {
		for _, c := range cs {
			if c.ID == id {
				return c, nil
			}
		}
	}
	for _, c := range cs {
		if c.Name == arg {
			return c, nil
		}
	}
	return clusterListing{}, notFound(arg)
}

func notFound(arg string) error {
	return fmt.Errorf("cluster %q not found (see clusters list)", arg)
}

// storeBackend works on the database directly.
type storeBackend struct{ st store.Store }

func (b storeBackend) list(ctx context.Context) ([]clusterListing, error) {
	cs, err := b.st.Clusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	out := make([]clusterListing, 0, len(cs))
	for _, c := range cs {
		out = append(out, fromStore(c))
	}
	return out, nil
}

func (b storeBackend) delete(ctx context.Context, id int64) error { return b.st.DeleteCluster(ctx, id) }

func (b storeBackend) rename(ctx context.Context, id int64, name string) (clusterListing, error) {
	c, err := b.st.RenameCluster(ctx, id, name)
	return fromStore(c), err
}

func fromStore(c store.Cluster) clusterListing {
	return clusterListing{ID: c.ID, Name: c.Name, ClusterUID: c.UID, FirstSeen: c.FirstSeen.UTC(), LastSeen: c.LastSeen.UTC(),
		ServerVersion: c.ServerVersion, LatestSnapshotID: c.LatestSnapshotID}
}
