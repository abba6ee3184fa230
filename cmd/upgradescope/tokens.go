package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/push"
	"github.com/upgradescope/upgradescope/server/store"
)

// dbTimeout bounds one tokens command, connecting included: an unreachable PostgreSQL fails
// rather than hangs.
const dbTimeout = time.Minute

func newTokensCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Create, list and revoke the fleet server's per-cluster ingest tokens",
		Long: `tokens works on the fleet server's database directly (--db, --db-url, --db-url-file or
$UPGRADESCOPE_DB_URL). An ingest token lets an agent push as one cluster only; the database
keeps its sha256 and first 8 characters, never the token.`,
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
	cmd := &cobra.Command{
		Use:   "create CLUSTER",
		Short: "Mint an ingest token that pushes only as CLUSTER; printed once on stdout",
		Example: `  upgradescope tokens create prod-eu-1 > prod-eu-1.token
  upgradescope tokens create prod-eu-1 --db-url-file /run/secrets/db-url`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	db.register(cmd)
	return cmd
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

// tokenJSON is one line of tokens list -o json: never the token, nor its hash.
type tokenJSON struct {
	ID      int64      `json:"id"`
	Prefix  string     `json:"prefix"`
	Cluster string     `json:"cluster"`
	Created time.Time  `json:"created"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

func newTokensListCommand(s streams) *cobra.Command {
	var db dbFlags
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ingest tokens (id, prefix, cluster, created, revoked); never a token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--output %q: want table or json", format)
			}
			return withStore(cmd, &db, func(ctx context.Context, st store.Store) error {
				ts, err := st.Tokens(ctx)
				if err != nil {
					return fmt.Errorf("list tokens: %w", err)
				}
				if format == "json" {
					return writeTokensJSON(s, ts)
				}
				return writeTokensTable(s, ts)
			})
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "table", "table or json")
	completeValues(cmd, "output", "table", "json")
	db.register(cmd)
	return cmd
}

func writeTokensJSON(s streams, ts []store.Token) error {
	out := make([]tokenJSON, 0, len(ts))
	for _, t := range ts {
		j := tokenJSON{ID: t.ID, Prefix: t.Prefix, Cluster: t.Cluster, Created: t.Created.UTC()}
		if !t.Revoked.IsZero() {
			r := t.Revoked.UTC()
			j.Revoked = &r
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTokensTable(s streams, ts []store.Token) error {
	w := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPREFIX\tCLUSTER\tCREATED\tREVOKED")
	for _, t := range ts {
		revoked := "-"
		if !t.Revoked.IsZero() {
			revoked = t.Revoked.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", t.ID, t.Prefix, t.Cluster, t.Created.UTC().Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

func newTokensRevokeCommand(s streams) *cobra.Command {
	var db dbFlags
	var id int64
	var all bool
	cmd := &cobra.Command{
		Use:   "revoke --id N | --all",
		Short: "Revoke one ingest token, or every active one",
		Example: `  upgradescope tokens revoke --id 3
  upgradescope tokens revoke --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hasID := cmd.Flags().Changed("id")
			if hasID == all {
				return errors.New("give exactly one of --id N and --all")
			}
			return withStore(cmd, &db, func(ctx context.Context, st store.Store) error {
				n, err := st.RevokeTokens(ctx, id, all)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no ingest token with id %d (see tokens list)", id)
				}
				if err != nil {
					return fmt.Errorf("revoke tokens: %w", err)
				}
				noun := "tokens"
				if n == 1 {
					noun = "token"
				}
				_, err = fmt.Fprintf(s.out, "revoked %d %s\n", n, noun)
				return err
			})
		},
	}
	cmd.Flags().Int64Var(&id, "id", 0, "the id tokens list shows")
	cmd.Flags().BoolVar(&all, "all", false, "every active ingest token")
	db.register(cmd)
	return cmd
}
