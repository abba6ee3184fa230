package advisor_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

// TestTheRealReaderServesTheAdvisor advises a Helm release whose chart is located through
// Helm's repositories.yaml and read from a loopback index.yaml by charts/repo's Reader.
func TestTheRealReaderServesTheAdvisor(t *testing.T) {
	srv := charttest.ServeIndex(t, webIngress...)
	dir := t.TempDir()
	config := filepath.Join(dir, "repositories.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: v1\nrepositories:\n  - name: loopback\n    url: "+srv.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := repo.New(repo.Options{CacheDir: filepath.Join(dir, "cache"), Timeout: 10 * time.Second, RepositoryConfig: config})
	if err != nil {
		t.Fatal(err)
	}
	got := advisor.Advise(context.Background(), []advisor.Subject{helmSubject("edge", "ingress", webIngress[0], "networking.k8s.io/v1beta1 Ingress")},
		advisor.Options{Targets: []string{"1.36"}, Engine: loadEngine(t), Now: now, Repository: reader})
	if len(got) != 1 || !got[0].Read {
		t.Fatalf("got %+v, want one entry read", got)
	}
	want := []judged{
		{"3.0.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
		{"3.2.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
		{"4.0.0", nil, false},
	}
	if s := summary(got[0]); !reflect.DeepEqual(s, want) {
		t.Fatalf("versions judged:\n got %+v\nwant %+v", s, want)
	}
	if got[0].Repository != srv.URL {
		t.Fatalf("repository %q, want %q", got[0].Repository, srv.URL)
	}
}

// TestAReleaseInstalledFromAnOCIRegistryIsReadWhereTheUserNamesIt: Helm's repositories.yaml
// never lists an OCI registry, so Locate cannot find such a release's chart; the chart's
// repository named in Options.Repositories can.
func TestAReleaseInstalledFromAnOCIRegistryIsReadWhereTheUserNamesIt(t *testing.T) {
	registry := charttest.ServeOCI(t, webIngress...)
	dir := t.TempDir()
	config := filepath.Join(dir, "repositories.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: v1\nrepositories: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := repo.New(repo.Options{CacheDir: filepath.Join(dir, "cache"), Timeout: 10 * time.Second, RepositoryConfig: config})
	if err != nil {
		t.Fatal(err)
	}
	subject := helmSubject("edge", "ingress", webIngress[0], "networking.k8s.io/v1beta1 Ingress")
	for _, tc := range []struct {
		name         string
		repositories map[string]string
		read         bool
	}{
		{"without a name for the chart's repository it is not found", nil, false},
		{"with one it is read from the registry", map[string]string{"web-ingress": registry.URL()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := advisor.Advise(context.Background(), []advisor.Subject{subject}, advisor.Options{
				Targets: []string{"1.36"}, Engine: loadEngine(t), Now: now, Repository: reader, Repositories: tc.repositories,
			})
			if len(got) != 1 || got[0].Read != tc.read {
				t.Fatalf("got %+v, want one entry, read %v", got, tc.read)
			}
			if !tc.read {
				return
			}
			if last := got[0].Versions[len(got[0].Versions)-1]; last.Version != "4.0.0" || len(last.Blocks) != 0 {
				t.Fatalf("versions %+v, want 4.0.0 free last", got[0].Versions)
			}
			if got[0].Repository != registry.URL() {
				t.Fatalf("repository %q, want %q", got[0].Repository, registry.URL())
			}
		})
	}
}
