// Package charttest builds chart repositories for tests: charts packaged by the Helm SDK,
// served on loopback as a classic repository (index.yaml and archives over HTTP) and as an
// OCI registry (go-containerregistry's registry, pushed to by Helm's own registry client).
package charttest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	chart "helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmregistry "helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Chart is one version of a chart written for a test.
type Chart struct {
	Name, Version, AppVersion, KubeVersion string
	// Templates are file names under templates/ and their text.
	Templates map[string]string
	Values    map[string]any
}

// Build returns c as the Helm SDK holds a chart.
func (c Chart) Build() *chartv2.Chart {
	ch := &chartv2.Chart{
		Metadata: &chartv2.Metadata{
			APIVersion: chartv2.APIVersionV2, Name: c.Name, Version: c.Version,
			AppVersion: c.AppVersion, KubeVersion: c.KubeVersion, Type: "application",
		},
		Values: c.Values,
	}
	for name, text := range c.Templates {
		ch.Templates = append(ch.Templates, &chart.File{Name: "templates/" + name, Data: []byte(text)})
	}
	return ch
}

// Package writes c as a .tgz into dir with the Helm SDK and returns its path.
func Package(t testing.TB, c Chart, dir string) string {
	t.Helper()
	path, err := chartutil.Save(c.Build(), dir)
	if err != nil {
		t.Fatalf("package %s-%s: %v", c.Name, c.Version, err)
	}
	return path
}

// Repo is a classic chart repository served on loopback.
type Repo struct {
	URL string
	// Dir holds index.yaml and the archives; a test may rewrite them.
	Dir string
	// Requests counts the requests served, so a test can tell a cache hit.
	Requests atomic.Int64
	// User and Password, when set, are required as HTTP basic auth.
	User, Password string
}

// ServeIndex packages charts into a fresh directory, indexes them with the Helm SDK and serves
// the directory on 127.0.0.1 until the test ends.
func ServeIndex(t testing.TB, charts ...Chart) *Repo {
	t.Helper()
	r := &Repo{Dir: t.TempDir()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		if r.User != "" {
			if u, p, ok := req.BasicAuth(); !ok || u != r.User || p != r.Password {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		http.FileServer(http.Dir(r.Dir)).ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	for _, c := range charts {
		Package(t, c, r.Dir)
	}
	r.Reindex(t)
	return r
}

// Reindex rewrites index.yaml from the archives in Dir.
func (r *Repo) Reindex(t testing.TB) {
	t.Helper()
	idx, err := repo.IndexDirectory(r.Dir, r.URL)
	if err != nil {
		t.Fatalf("index %s: %v", r.Dir, err)
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(r.Dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Registry is an OCI registry served on loopback.
type Registry struct {
	// Host is 127.0.0.1:port.
	Host     string
	Requests atomic.Int64
}

// ServeOCI starts an OCI registry on 127.0.0.1 and pushes each chart to
// oci://HOST/charts/NAME:VERSION with Helm's registry client. The charts' repository, as
// a user names it, is Registry.URL().
func ServeOCI(t testing.TB, charts ...Chart) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	for _, c := range charts {
		r.Push(t, c)
	}
	return r
}

// URL is the repository the charts were pushed to: oci://HOST/charts.
func (r *Registry) URL() string { return "oci://" + r.Host + "/charts" }

// Push packages c and pushes it to the registry.
func (r *Registry) Push(t testing.TB, c Chart) {
	t.Helper()
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(Package(t, c, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Host + "/charts/" + c.Name + ":" + c.Version
	if _, err := client.Push(data, ref); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}
