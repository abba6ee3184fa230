package repo_test

import (
	"path/filepath"
	"reflect"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func TestVersionsFromAClassicIndex(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	addIndexEntry(t, srv, "web", "latest") // not semver: must be left out
	r := newReader(t, repo.Options{})

	tests := []struct {
		name  string
		chart string
		want  []repo.Version
	}{
		{"a chart's versions come ascending by semver with the index's appVersion and kubeVersion", "web", []repo.Version{
			{Version: "0.9.0", AppVersion: "0.9", KubeVersion: "<1.30.0-0", Known: true},
			{Version: "1.0.0", AppVersion: "1.0", KubeVersion: "<1.36.0-0", Known: true},
			{Version: "1.1.0", AppVersion: "1.1", KubeVersion: ">=1.25.0-0", Known: true},
			{Version: "1.10.0", AppVersion: "1.10", KubeVersion: ">=1.28.0-0", Known: true},
		}},
		{"another chart of the same index has its own versions", "api", []repo.Version{
			{Version: "3.0.0", AppVersion: "3", Known: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Versions(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: tt.chart})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("versions = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestAChartTheIndexDoesNotHoldIsAnError(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	_, err := newReader(t, repo.Options{}).Versions(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "absent"})
	wantErr(t, err, "index of "+srv.URL+" has no chart absent")
}

func TestAClassicChartIsFetchedAsAsked(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	r := newReader(t, repo.Options{})
	ref := repo.Ref{Repository: srv.URL, Chart: "web"}

	ch, err := r.Chart(ctxFor(t), ref, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Name != "web" || ch.Metadata.Version != "1.0.0" || ch.Metadata.KubeVersion != "<1.36.0-0" {
		t.Errorf("metadata = %+v", ch.Metadata)
	}
	if len(ch.Templates) != 1 || ch.Templates[0].Name != "templates/cm.yaml" {
		t.Errorf("templates = %v, want templates/cm.yaml", ch.Templates)
	}
	_, err = r.Chart(ctxFor(t), ref, "7.0.0")
	wantErr(t, err, "has no chart web version 7.0.0", srv.URL)
}

func TestAnArchiveThatIsNotTheVersionAskedIsRefused(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	// The index says web 1.1.0 lives in the archive of web 1.0.0 (digest rewritten to match).
	idx := loadIndex(t, srv)
	for _, cv := range idx.Entries["web"] {
		if cv.Version == "1.1.0" {
			cv.URLs = []string{srv.URL + "/web-1.0.0.tgz"}
			cv.Digest = archiveDigest(t, srv, "web-1.0.0.tgz")
		}
	}
	writeIndex(t, srv, idx)
	_, err := newReader(t, repo.Options{}).Chart(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}, "1.1.0")
	wantErr(t, err, "chart web 1.1.0", "is web 1.0.0")
}

func loadIndex(t testing.TB, srv *charttest.Repo) *repov1.IndexFile {
	t.Helper()
	idx, err := repov1.LoadIndexFile(filepath.Join(srv.Dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func writeIndex(t testing.TB, srv *charttest.Repo, idx *repov1.IndexFile) {
	t.Helper()
	if err := idx.WriteFile(filepath.Join(srv.Dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// addIndexEntry writes an entry into the served index by hand, as a repository that does
// not validate its index might.
func addIndexEntry(t testing.TB, srv *charttest.Repo, name, version string) {
	t.Helper()
	idx := loadIndex(t, srv)
	idx.Entries[name] = append(idx.Entries[name], &repov1.ChartVersion{
		Metadata: &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name, Version: version},
		URLs:     []string{name + "-" + version + ".tgz"},
	})
	writeIndex(t, srv, idx)
}
