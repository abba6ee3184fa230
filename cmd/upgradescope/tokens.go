package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// dbTimeout bounds one tokens command, connecting included: an unreachable PostgreSQL fails
// rather than hangs.
const dbTimeout = time.Minute

func newTokensCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Create, list and revoke the fleet server's ingest and read tokens",
		Long: `tokens works on the fleet server's database directly (--db, --db-url, --db-url-file or
$UPGRADESCOPE_DB_URL). An ingest token lets an agent push as one cluster only; a read token
reads the API for its teams (or, with '*', the whole fleet), and minting the first closes an
open read API for good. The database keeps each token's sha256 and first 8 characters, never
the token.`,
	}
	cmd.AddCommand(newTokensCreateCommand(s), newTokensListCommand(s), newTokensRevokeCommand(s))
	return cmd
}

// withStore runs fn on the database db names, closed afterwards.
func withStore(cmd *cobra.Command, db *dbFlags, fn func(context.Context, store.Store) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), dbTimeout)
	defer cancel()
	st, err := db.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(ctx, st)
}

func newTokensCreateCommand(s streams) *cobra.Command {
	var db dbFlags
	var read bool
	var teams []string
	cmd := &cobra.Command{
		Use:   "create CLUSTER | --read --teams TEAM[,TEAM...]",
		Short: "Mint an ingest token that pushes only as CLUSTER, or a read token; printed once on stdout",
		Example: `  upgradescope tokens create prod-eu-1 > prod-eu-1.token
  upgradescope tokens create prod-eu-1 --db-url-file /run/secrets/db-url
  upgradescope tokens create --read --teams payments,checkout > payments.token
  upgradescope tokens create --read --teams '*' > fleet.token`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if read {
				return createReadToken(cmd, s, &db, args, teams)
			}
			if cmd.Flags().Changed("teams") {
				return errors.New("--teams scopes a read token: give --read too")
			}
			if len(args) != 1 {
				return errors.New("give the CLUSTER an ingest token pushes as, or --read --teams for a read token")
			}
			cluster := args[0]
			if err := push.CheckClusterName(cluster); err != nil {
				return err
			}
			return withStore(cmd, &db, func(ctx context.Context, st store.Store) error {
				tok, hash, err := newIngestToken()
				if err != nil {
					return err
				}
				t, err := st.CreateIngestToken(ctx, cluster, hash, tok[:8])
				if err != nil {
					return fmt.Errorf("create token: %w", err)
				}
				fmt.Fprintf(s.err, "ingest token id %d (prefix %s) for cluster %q created — shown once: store it now\n", t.ID, t.Prefix, t.Cluster)
				_, err = fmt.Fprintln(s.out, tok)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&read, "read", false, "mint a read token for the API instead of an ingest token; closes an open read API for good")
	cmd.Flags().StringSliceVar(&teams, "teams", nil, "with --read: the teams the token may read (label values, comma-separated or repeated), or '*' for the whole fleet")
	db.register(cmd)
	return cmd
}

// createReadToken mints a read token scoped to teams.
func createReadToken(cmd *cobra.Command, s streams, db *dbFlags, args, teams []string) error {
	if len(args) > 0 {
		return fmt.Errorf("a read token is not bound to a cluster: drop %q", args[0])
	}
	if err := checkTeams(teams); err != nil {
		return err
	}
	return withStore(cmd, db, func(ctx context.Context, st store.Store) error {
		tok, hash, err := newIngestToken()
		if err != nil {
			return err
		}
		t, err := st.CreateReadToken(ctx, teams, hash, tok[:8])
		if err != nil {
			return fmt.Errorf("create read token: %w", err)
		}
		fmt.Fprintf(s.err, "read token id %d (prefix %s) for teams %s created — shown once: store it now\n", t.ID, t.Prefix, strings.Join(t.Teams, ","))
		_, err = fmt.Fprintln(s.out, tok)
		return err
	})
}

// checkTeams refuses an empty team list and names that are not Kubernetes label values;
// '*' (the whole fleet) stands alone.
func checkTeams(teams []string) error {
	if len(teams) == 0 {
		return errors.New("--read needs --teams: the teams the token may read, or '*' for the whole fleet")
	}
	for _, team := range teams {
		if team == store.AllTeams {
			if len(teams) > 1 {
				return errors.New("--teams '*' reads the whole fleet: give it alone")
			}
			continue
		}
		if team == "" {
			return errors.New("--teams: empty team name")
		}
		if errs := validation.IsValidLabelValue(team); len(errs) > 0 {
			return fmt.Errorf("--teams: team %q is not a label value: %s", team, strings.Join(errs, "; "))
		}
	}
	return nil
}

// newIngestToken answers 32 random bytes as 64 hex characters, and the sha256 hex the store
// keeps. A fast hash is enough: the token carries 256 random bits.
func newIngestToken() (tok, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("generate token: %w", err)
	}
	tok = hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(tok))
	return tok, hex.EncodeToString(sum[:]), nil
}

// tokenJSON is one line of tokens list -o json: never the token, nor its hash. Kind is
// "ingest" (with Cluster) or "read" (with Teams; ["*"] for the whole fleet).
type tokenJSON struct {
	ID      int64      `json:"id"`
	Kind    string     `json:"kind"`
	Prefix  string     `json:"prefix"`
	Cluster string     `json:"cluster,omitempty"`
	Teams   []string   `json:"teams,omitempty"`
	Created time.Time  `json:"created"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

func newTokensListCommand(s streams) *cobra.Command {
	var db dbFlags
	var format listFormat
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ingest and read tokens (id, kind, prefix, cluster or teams, created, revoked); never a token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.check(); err != nil {
				return err
			}
			return withStore(cmd, &db, func(ctx context.Context, st store.Store) error {
				ts, err := listTokens(ctx, st)
				if err != nil {
					return err
				}
				return format.write(s, ts, func() error { return writeTokensTable(s, ts) })
			})
		},
	}
	format.register(cmd)
	db.register(cmd)
	return cmd
}

// listTokens answers the ingest tokens, then the read tokens, each in id order.
func listTokens(ctx context.Context, st store.Store) ([]tokenJSON, error) {
	ingest, err := st.Tokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	read, err := st.ReadTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("list read tokens: %w", err)
	}
	out := make([]tokenJSON, 0, len(ingest)+len(read))
	for _, t := range ingest {
		out = append(out, tokenJSON{ID: t.ID, Kind: "ingest", Prefix: t.Prefix, Cluster: t.Cluster,
			Created: t.Created.UTC(), Revoked: revokedAt(t.Revoked)})
	}
	for _, t := range read {
		out = append(out, tokenJSON{ID: t.ID, Kind: "read", Prefix: t.Prefix, Teams: t.Teams,
			Created: t.Created.UTC(), Revoked: revokedAt(t.Revoked)})
	}
	return out, nil
}

func revokedAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	r := t.UTC()
	return &r
}

func writeTokensTable(s streams, ts []tokenJSON) error {
	table := newTextTable(s.out, "ID", "KIND", "PREFIX", "CLUSTER/TEAMS", "CREATED", "REVOKED")
	for _, t := range ts {
		revoked := "-"
		if t.Revoked != nil {
			revoked = t.Revoked.Format(time.RFC3339)
		}
		scope := t.Cluster
		if t.Kind == "read" {
			scope = strings.Join(t.Teams, ",")
		}
		table.row(strconv.FormatInt(t.ID, 10), t.Kind, t.Prefix, scope, t.Created.Format(time.RFC3339), revoked)
	}
	return table.flush()
}

func newTokensRevokeCommand(s streams) *cobra.Command {
	var db dbFlags
	var id int64
	var all, read bool
	cmd := &cobra.Command{
		Use:   "revoke [--read] --id N | [--read] --all",
		Short: "Revoke one ingest token, or every active one; with --read, read tokens",
		Example: `  upgradescope tokens revoke --id 3
  upgradescope tokens revoke --all
  upgradescope tokens revoke --read --id 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hasID := cmd.Flags().Changed("id")
			if hasID == all {
				return errors.New("give exactly one of --id N and --all")
			}
			return withStore(cmd, &db, func(ctx context.Context, st store.Store) error {
				revoke, kind := st.RevokeTokens, "ingest"
				if read {
					revoke, kind = st.RevokeReadTokens, "read"
				}
				n, err := revoke(ctx, id, all)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no %s token with id %d (see tokens list)", kind, id)
				}
				if err != nil {
					return fmt.Errorf("revoke tokens: %w", err)
				}
				noun := "tokens"
				if n == 1 {
					noun = "token"
				}
				if read {
					noun = "read " + noun
				}
				_, err = fmt.Fprintf(s.out, "revoked %d %s\n", n, noun)
				return err
			})
		},
	}
	cmd.Flags().Int64Var(&id, "id", 0, "the id tokens list shows")
	cmd.Flags().BoolVar(&all, "all", false, "every active ingest token (with --read: read token)")
	cmd.Flags().BoolVar(&read, "read", false, "revoke read tokens instead of ingest tokens; the read API stays closed")
	db.register(cmd)
	return cmd
}
