package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// envDBURL names the environment variable that may hold the PostgreSQL URL, so it stays off
// the command line.
const envDBURL = "UPGRADESCOPE_DB_URL"

// dbFlags is the flag group naming the fleet server's database: a SQLite file (--db) or a
// PostgreSQL URL from one of --db-url and --db-url-file, else $UPGRADESCOPE_DB_URL.
type dbFlags struct {
	path, url, urlFile string
	cmd                *cobra.Command
}

func (f *dbFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&f.path, "db", "upgradescope.db", "SQLite database file (created 0600 if missing)")
	fl.StringVar(&f.url, "db-url", "", "PostgreSQL URL, postgres://… (or $"+envDBURL+"); not with --db")
	fl.StringVar(&f.urlFile, "db-url-file", "", "file holding the PostgreSQL URL")
}

// postgresURL answers the PostgreSQL URL the flags and environment name, "" for SQLite.
func (f *dbFlags) postgresURL() (string, error) {
	var from []string
	var u string
	if f.cmd.Flags().Changed("db-url") {
		from, u = append(from, "--db-url"), f.url
	}
	if f.cmd.Flags().Changed("db-url-file") {
		from = append(from, "--db-url-file")
		data, err := smallfile.Read(f.urlFile, smallfile.MaxSecret)
		if err != nil {
			return "", fmt.Errorf("--db-url-file: %w", err)
		}
		u = string(data)
	}
	// The environment is a default: any of the flags, --db included, overrides it.
	if env := os.Getenv(envDBURL); env != "" && len(from) == 0 && !f.cmd.Flags().Changed("db") {
		from, u = append(from, "$"+envDBURL), env
	}
	switch {
	case len(from) > 1:
		return "", fmt.Errorf("%s: give the PostgreSQL URL once", strings.Join(from, ", "))
	case len(from) == 0:
		return "", nil
	case f.cmd.Flags().Changed("db"):
		return "", fmt.Errorf("--db names a SQLite file and %s a PostgreSQL database: give one", from[0])
	}
	u = strings.TrimSpace(u)
	if l := strings.ToLower(u); !strings.HasPrefix(l, "postgres://") && !strings.HasPrefix(l, "postgresql://") {
		// A key=value connection string would print its password: name only a URL.
		shown := ""
		if strings.Contains(u, "://") {
			shown = " " + bundles.SanitizedURL(u)
		}
		return "", fmt.Errorf("%s%s: want a postgres:// or postgresql:// URL", from[0], shown)
	}
	return u, nil
}

// open opens and migrates the database the flags name. Its errors name a PostgreSQL URL
// without credentials, query or fragment, and say what to do next.
func (f *dbFlags) open(ctx context.Context) (store.Store, error) {
	u, err := f.postgresURL()
	if err != nil {
		return nil, err
	}
	if u == "" {
		// The store's errors name the file.
		st, err := store.OpenSQLite(ctx, f.path)
		return st, dbHint(err, f.path)
	}
	st, err := store.OpenPostgres(ctx, u)
	if err != nil {
		return nil, dbHint(fmt.Errorf("database %s: %w", bundles.SanitizedURL(u), bundles.Redact(err, u)), "")
	}
	return st, nil
}

// dbHint says what to do next about an error opening a database.
func dbHint(err error, path string) error {
	switch {
	case errors.Is(err, store.ErrSchemaTooNew):
		return fmt.Errorf("%w, or point --db/--db-url at another database", err)
	case errors.Is(err, store.ErrUnavailable) && path != "":
		return fmt.Errorf("%w (is another process holding %s?)", err, path)
	case errors.Is(err, store.ErrUnavailable):
		return fmt.Errorf("%w (is PostgreSQL running and reachable?)", err)
	}
	return err
}
