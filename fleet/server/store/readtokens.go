package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
)

// AllTeams is the team list of a read token that reads the whole fleet.
const AllTeams = "*"

const (
	qInsertReadToken = `INSERT INTO read_tokens (teams, hash, prefix, created_at) VALUES ($1, $2, $3, $4)
RETURNING id`
	qCloseReadAPI = `INSERT INTO server_state (key, value) VALUES ('read_api_closed', 'true')
ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	qReadAPIClosed     = `SELECT count(*) FROM server_state WHERE key = 'read_api_closed' AND value = 'true'`
	qReadTokenTeams    = `SELECT teams FROM read_tokens WHERE hash = $1 AND revoked_at IS NULL`
	qReadTokens        = `SELECT id, teams, prefix, created_at, revoked_at FROM read_tokens ORDER BY id`
	qRevokeReadAll     = `UPDATE read_tokens SET revoked_at = $1 WHERE revoked_at IS NULL`
	qRevokeReadOne     = `UPDATE read_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`
	qReadTokenIDExists = `SELECT count(*) FROM read_tokens WHERE id = $1`
)

func (s *sqlStore) CreateReadToken(ctx context.Context, teams []string, hash, prefix string) (ReadToken, error) {
	teams = normaliseTeams(teams)
	enc, err := json.Marshal(teams)
	if err != nil {
		return ReadToken{}, fmt.Errorf("encode teams: %w", err)
	}
	t := ReadToken{Teams: teams, Prefix: prefix, Created: fromNanos(s.now().UnixNano())}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, qInsertReadToken, string(enc), hash, prefix,
			t.Created.UnixNano()).Scan(&t.ID); err != nil {
			if s.d.unique(err) {
				return conflict(ReasonTokenTaken)
			}
			return err
		}
		_, err := tx.ExecContext(ctx, qCloseReadAPI)
		return err
	})
	if err != nil {
		return ReadToken{}, fmt.Errorf("create read token: %w", s.classify(err))
	}
	return t, nil
}

func (s *sqlStore) ReadTokenTeams(ctx context.Context, hash string) ([]string, error) {
	var enc string
	err := s.r.QueryRowContext(ctx, qReadTokenTeams, hash).Scan(&enc)
	var teams []string
	if err == nil {
		err = json.Unmarshal([]byte(enc), &teams)
	}
	if err != nil {
		return nil, fmt.Errorf("look up read token: %w", s.classify(noRows(err)))
	}
	return teams, nil
}

func (s *sqlStore) ReadTokens(ctx context.Context) ([]ReadToken, error) {
	out, err := queryAll(ctx, s.r, qReadTokens, func(sc scanner) (ReadToken, error) {
		var (
			t       ReadToken
			enc     string
			created int64
			revoked sql.NullInt64
		)
		if err := sc.Scan(&t.ID, &enc, &t.Prefix, &created, &revoked); err != nil {
			return t, err
		}
		t.Created = fromNanos(created)
		if revoked.Valid {
			t.Revoked = fromNanos(revoked.Int64)
		}
		return t, json.Unmarshal([]byte(enc), &t.Teams)
	})
	if err != nil {
		return nil, fmt.Errorf("list read tokens: %w", s.classify(err))
	}
	return out, nil
}

func (s *sqlStore) RevokeReadTokens(ctx context.Context, id int64, all bool) (int, error) {
	return s.revoke(ctx, revokeQueries{all: qRevokeReadAll, one: qRevokeReadOne, exists: qReadTokenIDExists, kind: "read token"}, id, all)
}

func (s *sqlStore) ReadAPIClosed(ctx context.Context) (bool, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, qReadAPIClosed).Scan(&n); err != nil {
		return false, fmt.Errorf("read whether the read API is closed: %w", s.classify(err))
	}
	return n > 0, nil
}

// normaliseTeams answers teams sorted and without repeats; a list holding AllTeams is
// just AllTeams.
func normaliseTeams(teams []string) []string {
	if slices.Contains(teams, AllTeams) {
		return []string{AllTeams}
	}
	out := slices.Clone(teams)
	slices.Sort(out)
	return slices.Compact(out)
}
