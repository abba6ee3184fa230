package repo_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	repov1 "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

const password = "s3cr3t-pa55word"

func containsText(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// writeRepositories writes Helm's repositories.yaml with entries, as `helm repo add` would.
func writeRepositories(t testing.TB, entries ...*repov1.Entry) string {
	t.Helper()
	f := repov1.NewFile()
	f.Add(entries...)
	path := filepath.Join(t.TempDir(), "repositories.yaml")
	if err := f.WriteFile(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestABasicAuthRepository(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	srv.User, srv.Password = "ci", password
	ref := repo.Ref{Repository: srv.URL, Chart: "web"}
	entry := &repov1.Entry{Name: "private", URL: srv.URL, Username: "ci", Password: password}
	wrong := &repov1.Entry{Name: "private", URL: srv.URL, Username: "ci", Password: password + "-old"}

	tests := []struct {
		name    string
		opts    repo.Options
		wantErr string
	}{
		{"without credentials the read fails as unauthorized", repo.Options{}, "read index " + srv.URL + "/index.yaml: 401 Unauthorized"},
		{"with a wrong password the read fails as unauthorized", repo.Options{RepositoryConfig: writeRepositories(t, wrong)}, "401 Unauthorized"},
		{"with the entry of Helm's repositories.yaml the read succeeds", repo.Options{RepositoryConfig: writeRepositories(t, entry)}, ""},
		{"with credentials a GitOps secret names the read succeeds", repo.Options{
			Credentials: func(repository string) (repo.Credentials, bool) {
				return repo.Credentials{Username: "ci", Password: password}, repository == srv.URL
			},
		}, ""},
		{"credentials in the URL itself are used and not printed", repo.Options{}, ""},
		{"credentials in the URL of Helm's repositories.yaml entry are used and not printed", repo.Options{
			RepositoryConfig: writeRepositories(t, &repov1.Entry{Name: "private", URL: strings.Replace(srv.URL, "http://", "http://ci:"+password+"@", 1)}),
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(t, tt.opts)
			ref := ref
			if strings.Contains(tt.name, "URL itself") {
				ref.Repository = strings.Replace(srv.URL, "http://", "http://ci:"+password+"@", 1)
			}
			_, verr := r.Versions(ctxFor(t), ref)
			_, cerr := r.Chart(ctxFor(t), ref, "1.0.0")
			for _, err := range []error{verr, cerr} {
				if containsText(err, password) {
					t.Fatalf("error %q holds the password", err)
				}
				if tt.wantErr == "" && err != nil {
					t.Fatal(err)
				}
				if tt.wantErr != "" {
					wantErr(t, err, tt.wantErr)
				}
			}
		})
	}
}

func TestCredentialsGoToAnotherHostOnlyWhenPassCredentialsAll(t *testing.T) {
	charts := charttest.ServeIndex(t, web...) // the archives' host, which wants credentials
	charts.User, charts.Password = "ci", password
	index := charttest.ServeIndex(t) // the index's host, which names archives on the other
	idx := loadIndex(t, charts)
	writeIndex(t, index, idx)

	for _, pass := range []bool{false, true} {
		entry := &repov1.Entry{Name: "split", URL: index.URL, Username: "ci", Password: password, PassCredentialsAll: pass}
		r := newReader(t, repo.Options{RepositoryConfig: writeRepositories(t, entry)})
		_, err := r.Chart(ctxFor(t), repo.Ref{Repository: index.URL, Chart: "web"}, "1.0.0")
		switch {
		case pass && err != nil:
			t.Errorf("with pass_credentials_all the archive on another host was refused: %v", err)
		case !pass && !containsText(err, "401 Unauthorized"):
			t.Errorf("without pass_credentials_all the credentials went to another host: err = %v", err)
		}
	}
}

func TestLocateFindsTheRepositoryHoldingTheExactVersion(t *testing.T) {
	old := charttest.ServeIndex(t, web[1], web[3]) // web 0.9.0, 1.0.0
	recent := charttest.ServeIndex(t, web[0], web[2], web[3])
	recent.User, recent.Password = "ci", password
	config := writeRepositories(t,
		&repov1.Entry{Name: "old", URL: old.URL},
		&repov1.Entry{Name: "down", URL: "http://127.0.0.1:1/charts"},
		&repov1.Entry{Name: "recent", URL: recent.URL, Username: "ci", Password: password},
	)
	r := newReader(t, repo.Options{RepositoryConfig: config})

	tests := []struct {
		name, chart, version string
		want                 string
		wantErr              []string
	}{
		{"a version only the later repository holds is found there", "web", "1.10.0", recent.URL, nil},
		{"a version both hold is found in the first in file order", "web", "1.0.0", old.URL, nil},
		{"a version no repository holds is an error naming the file and what was read", "web", "5.0.0", "", []string{
			"no repository in " + config + " holds chart web version 5.0.0", "read 2 of 3 repositories", "could not read: down",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := r.Locate(ctxFor(t), tt.chart, tt.version)
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ref.Repository != tt.want || ref.Chart != tt.chart {
				t.Errorf("Locate = %+v, want %s", ref, tt.want)
			}
			// The entry's credentials follow the repository into Chart.
			if _, err := r.Chart(ctxFor(t), ref, tt.version); err != nil {
				t.Errorf("chart from the located repository: %v", err)
			}
		})
	}
}

func TestRedactKeepsSchemeHostPortAndPathOnly(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pw@charts.example.com:8443/stable/?token=x#frag", "https://charts.example.com:8443/stable/"},
		{"oci://user@registry.example.com/charts", "oci://registry.example.com/charts"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"https://user:p w@bad host/%zz?q=1", "https://bad host/%zz"},
	}
	for _, tt := range tests {
		if got := repo.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnOfflineMissWrapsErrNotCached(t *testing.T) {
	r := newReader(t, repo.Options{Offline: true})
	_, err := r.Versions(ctxFor(t), repo.Ref{Repository: "https://charts.example.com", Chart: "web"})
	if !errors.Is(err, repo.ErrNotCached) {
		t.Errorf("offline error %v does not wrap ErrNotCached", err)
	}
}
