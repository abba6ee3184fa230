package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

func testReadTokenLookup(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	tok, err := s.CreateReadToken(ctx, []string{"payments"}, hash(1), "prefix01")
	if err != nil {
		t.Fatalf("CreateReadToken: %v", err)
	}
	if tok.ID == 0 || !slices.Equal(tok.Teams, []string{"payments"}) || tok.Prefix != "prefix01" || tok.Created.IsZero() {
		t.Errorf("CreateReadToken = %+v, want an id, [payments], prefix01 and a created time", tok)
	}
	teams, err := s.ReadTokenTeams(ctx, hash(1))
	if err != nil || !slices.Equal(teams, []string{"payments"}) {
		t.Errorf("ReadTokenTeams = %q, %v; want [payments]", teams, err)
	}
	if _, err := s.ReadTokenTeams(ctx, hash(2)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadTokenTeams(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.IngestTokenCluster(ctx, hash(1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IngestTokenCluster(a read token) = %v, want ErrNotFound", err)
	}
	if _, err := s.CreateReadToken(ctx, []string{"other"}, hash(1), "prefix01"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("CreateReadToken(same hash) = %v, want ErrConflict", err)
	}
	if n, err := s.RevokeReadTokens(ctx, tok.ID, false); n != 1 || err != nil {
		t.Fatalf("RevokeReadTokens = %d, %v; want 1", n, err)
	}
	if _, err := s.ReadTokenTeams(ctx, hash(1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadTokenTeams after revoking = %v, want ErrNotFound", err)
	}
}

func testReadTokenRevoke(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	if _, err := s.CreateIngestToken(ctx, "c", hash(9), "prefix09"); err != nil {
		t.Fatalf("CreateIngestToken: %v", err)
	}
	var last int64
	for i := range 3 {
		tok, err := s.CreateReadToken(ctx, []string{"a"}, hash(i), "prefix00")
		if err != nil {
			t.Fatalf("CreateReadToken: %v", err)
		}
		last = tok.ID
	}
	checkRevoking(t, "RevokeReadTokens", last, func(id int64, all bool) (int, error) { return s.RevokeReadTokens(ctx, id, all) })
	if c, err := s.IngestTokenCluster(ctx, hash(9)); err != nil || c != "c" {
		t.Errorf("the ingest token after revoking all read tokens: %q, %v; want c", c, err)
	}
}

func testReadTokenList(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	var ids []int64
	for i, teams := range [][]string{{"b", "a", "b"}, {"*"}, {"x", "*"}, {"team-z"}} {
		tok, err := s.CreateReadToken(ctx, teams, hash(i), fmt.Sprintf("prefix%02d", i))
		if err != nil {
			t.Fatalf("CreateReadToken: %v", err)
		}
		ids = append(ids, tok.ID)
	}
	if _, err := s.RevokeReadTokens(ctx, ids[3], false); err != nil {
		t.Fatalf("RevokeReadTokens: %v", err)
	}
	toks, err := s.ReadTokens(ctx)
	if err != nil {
		t.Fatalf("ReadTokens: %v", err)
	}
	var got []string
	for i, tok := range toks {
		if i >= len(ids) || tok.ID != ids[i] {
			t.Errorf("ReadTokens[%d].ID = %d, want the ids created, in order: %v", i, tok.ID, ids)
		}
		state := "active"
		if !tok.Revoked.IsZero() {
			state = "revoked"
		}
		got = append(got, fmt.Sprintf("%s %s %s", strings.Join(tok.Teams, ","), tok.Prefix, state))
		for i := range 4 {
			if strings.Contains(fmt.Sprintf("%#v", tok), hash(i)) {
				t.Errorf("ReadTokens shows a stored hash: %#v", tok)
			}
		}
	}
	want := "a,b prefix00 active|* prefix01 active|* prefix02 active|team-z prefix03 revoked"
	if strings.Join(got, "|") != want {
		t.Errorf("ReadTokens = %q, want %q", strings.Join(got, "|"), want)
	}
	if teams, err := s.ReadTokenTeams(ctx, hash(0)); err != nil || !slices.Equal(teams, []string{"a", "b"}) {
		t.Errorf("ReadTokenTeams = %q, %v; want [a b]", teams, err)
	}
	if toks, err := s.Tokens(ctx); err != nil || len(toks) != 0 {
		t.Errorf("Tokens = %v, %v; want no ingest tokens", toks, err)
	}
}

func testReadAPIClosed(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	other := mustOpen(t, open)
	assertClosed := func(what string, want bool) {
		t.Helper()
		for i, h := range []store.Store{s, other} {
			if got, err := h.ReadAPIClosed(ctx); got != want || err != nil {
				t.Errorf("%s: handle %d: ReadAPIClosed = %v, %v; want %v", what, i, got, err, want)
			}
		}
	}
	assertClosed("a new database", false)
	if _, err := s.CreateIngestToken(ctx, "c", hash(9), "prefix09"); err != nil {
		t.Fatalf("CreateIngestToken: %v", err)
	}
	assertClosed("after an ingest token", false)
	if _, err := s.CreateReadToken(ctx, []string{"*"}, hash(0), "prefix00"); err != nil {
		t.Fatalf("CreateReadToken: %v", err)
	}
	assertClosed("after a read token", true)
	if _, err := other.RevokeReadTokens(ctx, 0, true); err != nil {
		t.Fatalf("RevokeReadTokens: %v", err)
	}
	assertClosed("after revoking every read token", true)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, err := mustOpen(t, open).ReadAPIClosed(ctx); !got || err != nil {
		t.Errorf("reopened: ReadAPIClosed = %v, %v; want true", got, err)
	}
}
