package client_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
)

func TestReportReadsAClustersStoredReportAtATarget(t *testing.T) {
	fs := startFleet(t, "teams")
	c := connect(t, fs.url, readToken)
	id := clusterID(t, c, "teams")
	d, err := c.Cluster(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ target, want string }{{"", "1.33"}, {"1.37", "1.37"}} {
		t.Run("at "+cmpOr(tt.target, "its next minor"), func(t *testing.T) {
			r, err := c.Report(t.Context(), id, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if r.ClusterID != id || r.ClusterName != "teams" || r.Target != tt.want || r.Source != api.SourceStored ||
				r.SnapshotID != d.LatestSnapshotID || r.EvaluatedAt.IsZero() || r.SchemaVersion != api.ClusterReportSchema {
				t.Errorf("envelope %+v: want teams' stored report of snapshot %d at %s", r, d.LatestSnapshotID, tt.want)
			}
			if len(r.Report.Targets) != 1 || r.Report.Targets[0].Target != tt.want || len(r.Report.Bundles) == 0 {
				t.Fatalf("report targets %+v: want %s alone, with its bundles", r.Report.Targets, tt.want)
			}
			var raw struct {
				Report struct {
					Targets []struct {
						Verdict  string
						Findings []struct{ Key string }
					}
				}
			}
			getJSON(t, fs.url, readToken, "/api/v1/clusters/"+strconv.FormatInt(id, 10)+"/report?target="+tt.target, &raw)
			got := r.Report.Targets[0]
			if got.Verdict != raw.Report.Targets[0].Verdict || len(got.Findings) != len(raw.Report.Targets[0].Findings) || len(got.Findings) == 0 {
				t.Errorf("verdict %s with %d findings, the server's %+v", got.Verdict, len(got.Findings), raw.Report.Targets[0])
			}
		})
	}
}

func TestReportAnswersRefusalsAsErrors(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	labels := client.Labels{Server: "--server", Token: "--read-token", TokenFile: "--read-token-file"}
	admin := connect(t, fs.url, readToken)
	teams, clean := clusterID(t, admin, "teams"), clusterID(t, admin, "clean-is-ready")
	for _, tt := range []struct {
		name, token string
		id          int64
		target      string
		is          error
		says        string
	}{
		{name: "an unknown cluster", token: readToken, id: 9999, is: client.ErrNotFound, says: "404 Not Found"},
		{name: "a cluster out of a scoped token's teams", token: mintRead(t, fs, "payments"), id: clean, is: client.ErrNotFound, says: "404 Not Found"},
		{name: "a target the cluster already runs", token: readToken, id: teams, target: "1.32", says: "already runs 1.32"},
		{name: "a wrong token", token: "not-the-token", id: teams, says: "(check --read-token)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := connect(t, fs.url, tt.token, client.WithLabels(labels)).Report(t.Context(), tt.id, tt.target)
			var e *client.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want a *client.Error saying %q", err, tt.says)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want one matching %v", err, tt.is)
			}
		})
	}
}
