package mcpserver_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// writeCandidate writes testdata/dry-run/candidate as a bundle tarball signed with
// privateKey ("": unsigned) to root/name.
func writeCandidate(t *testing.T, root, name, privateKey string) []byte {
	t.Helper()
	raw := bundletest.Build(t, filepath.Join(repoRoot(t), "testdata", "dry-run", "candidate"), "2026-11-30.1", privateKey)
	if err := os.WriteFile(filepath.Join(root, name), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return raw
}

// At the fleet server's clock the candidate's rule turns the clean clusters blocked at
// 1.37 (fleet/server's dry-run golden says why) and changes nothing the teams clusters are
// blocked by.
func TestDryRunBundleSummarisesTheServersDryRunAndStoresNothing(t *testing.T) {
	f := startFleet(t)
	root := t.TempDir()
	raw := writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	fc, err := client.New(f.url, client.WithToken(fleetReadToken))
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := fc.DryRun(t.Context(), raw, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before serverFleet
	f.get(t, fleetReadToken, "/api/v1/fleet?target=1.37", &before)
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, f.mcpServer(t, root, fleetReadToken), tr)
			a, _ := call[mcpserver.DryRunAnswer](t, cs, "dry_run_bundle", map[string]any{"bundle": "candidate.tar.gz"})
			s := a.Summary
			if s.Clusters != want.Clusters || s.TurnedBlocked != len(want.TurnedBlocked) || s.Changed != len(want.Changed) ||
				s.NewBlockers != len(want.NewBlockers) || s.Unjudged != len(want.Unjudged) || s.CandidateErrors != 0 {
				t.Errorf("summary %+v, the server's %+v", s, want)
			}
			if !slices.Equal(a.NewBlockers, want.NewBlockers) || len(a.NewBlockers) == 0 {
				t.Errorf("newBlockers %v, the server's %v", a.NewBlockers, want.NewBlockers)
			}
			if !strings.Contains(a.Candidate, "candidate.tar.gz: revision 2026-11-30.1") || len(a.JudgedWith) == 0 || a.Run == "" {
				t.Errorf("answer %+v: want the candidate's file and revision, the server's bundles and a run id", a)
			}
			var turned []string
			for _, c := range a.Changes {
				if c.From == "ready" && c.To == "blocked" && c.Target == "1.37" && len(c.NewBlockers) > 0 {
					turned = append(turned, c.Cluster)
				}
			}
			if !slices.Equal(turned, want.TurnedBlocked) || a.Changes[0].To != "blocked" || a.Total != len(a.Changes) {
				t.Errorf("changes %+v: want %v turned blocked at 1.37 with their new blockers, first", a.Changes, want.TurnedBlocked)
			}
		})
	}
	var after serverFleet
	f.get(t, fleetReadToken, "/api/v1/fleet?target=1.37", &after)
	if !equalMaps(after.Counts, before.Counts) {
		t.Errorf("after the dry runs the fleet counts %v, before %v: a dry run stores nothing", after.Counts, before.Counts)
	}
}

func TestDryRunBundleRefusesWhatTheServerWouldNotJudge(t *testing.T) {
	f := startFleet(t)
	root := t.TempDir()
	writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	writeCandidate(t, root, "unsigned.tar.gz", "")
	outside := t.TempDir()
	writeCandidate(t, outside, "elsewhere.tar.gz", f.privateKey)
	if err := os.Symlink(filepath.Join(outside, "elsewhere.tar.gz"), filepath.Join(root, "link.tar.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	scoped := f.mintRead(t, "payments")
	for _, tt := range []struct {
		name, token, bundle string
		says                []string
	}{
		{"a candidate outside the root", fleetReadToken, filepath.Join(outside, "elsewhere.tar.gz"), []string{"is outside the root"}},
		{"a symlink leading out of the root", fleetReadToken, "link.tar.gz", []string{"is outside the root"}},
		{"a directory", fleetReadToken, "dir", []string{"candidate dir is a directory", "bundle build"}},
		{"an unsigned candidate", fleetReadToken, "unsigned.tar.gz", []string{"unsigned.tar.gz is not signed", "bundle sign"}},
		{"no candidate", fleetReadToken, "", []string{"bundle: name a signed candidate"}},
		{"a team-scoped token", scoped, "candidate.tar.gz", []string{"403 Forbidden", "fleet-wide read token", "check --read-token"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := connect(t, f.mcpServer(t, root, tt.token), pipes)
			msg := callError(t, cs, "dry_run_bundle", map[string]any{"bundle": tt.bundle})
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q: want it saying %q", msg, s)
				}
			}
		})
	}
}

// A dry run's pages are its session's: over --http another client naming the run in a
// cursor is refused, while the session that ran it pages it.
func TestADryRunIsPagedByItsOwnSessionOnly(t *testing.T) {
	f := startFleet(t)
	root := t.TempDir()
	writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	base := serveHTTP(t, f.mcpServer(t, root, fleetReadToken), mcpserver.HTTPOptions{})
	mine, theirs := connectHTTP(t, base), connectHTTP(t, base)
	a, _ := call[mcpserver.DryRunAnswer](t, mine, "dry_run_bundle", map[string]any{"bundle": "candidate.tar.gz"})
	// A cursor naming the run, as an assistant of another session could write one.
	cursor := base64.RawURLEncoding.EncodeToString([]byte(`{"q":{"run":"` + a.Run + `"},"at":0}`))
	if page, _ := call[mcpserver.DryRunAnswer](t, mine, "dry_run_bundle", map[string]any{"cursor": cursor}); page.Run != a.Run || page.Total != a.Total {
		t.Errorf("the session that ran %s pages %s of %d changes, want its own of %d", a.Run, page.Run, page.Total, a.Total)
	}
	if msg := callError(t, theirs, "dry_run_bundle", map[string]any{"cursor": cursor}); !strings.Contains(msg, "is not kept in this session (its last 4 are)") {
		t.Errorf("another session paging %s: %q, want it refused", a.Run, msg)
	}
}
