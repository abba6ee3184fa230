package repo_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

// web is a chart at several versions, written in no order, with the kubeVersion history a
// real chart has: the old versions exclude new Kubernetes.
var web = []charttest.Chart{
	{Name: "web", Version: "1.1.0", AppVersion: "1.1", KubeVersion: ">=1.25.0-0"},
	{Name: "web", Version: "0.9.0", AppVersion: "0.9", KubeVersion: "<1.30.0-0"},
	{Name: "web", Version: "1.10.0", AppVersion: "1.10", KubeVersion: ">=1.28.0-0"},
	{Name: "web", Version: "1.0.0", AppVersion: "1.0", KubeVersion: "<1.36.0-0",
		Templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"}},
	{Name: "api", Version: "3.0.0", AppVersion: "3"},
}

// newReader is a Reader over a fresh cache, blind to the user's own Helm configuration.
func newReader(t testing.TB, opts repo.Options) *repo.Reader {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	if opts.RepositoryConfig == "" {
		opts.RepositoryConfig = filepath.Join(t.TempDir(), "repositories.yaml")
	}
	if opts.RegistryConfig == "" {
		opts.RegistryConfig = filepath.Join(t.TempDir(), "config.json")
	}
	r, err := repo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func versionStrings(vs []repo.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}
