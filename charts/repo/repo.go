// Package repo reads chart repositories for the chart advisor: classic HTTP repositories
// through their index.yaml, and OCI registries, with the Helm SDK's own getters and registry
// client, the credentials Helm's configuration or the GitOps objects name, a deadline, a size
// bound and a cache directory.
package repo

import (
	"context"
	"errors"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// Ref names a chart in a repository: Repository is an https:// (or http://) repository URL,
// the directory holding index.yaml, or oci://host/path, the path the chart is pushed under.
type Ref struct {
	Repository string
	Chart      string
}

// Version is one version a repository offers, as its index (or, for OCI, the chart's own
// metadata) states it.
type Version struct {
	Version     string
	AppVersion  string
	KubeVersion string
	// Known is false for an OCI version whose metadata has not been read yet: AppVersion and
	// KubeVersion are then empty until Chart fetches it.
	Known bool
}

// Credentials authenticate to one repository. They are never logged or written into an
// error, a report or the cache.
type Credentials struct {
	Username, Password        string
	CertFile, KeyFile, CAFile string
	InsecureSkipTLSVerify     bool
	PassCredentialsAll        bool
}

// Options configure a Reader.
type Options struct {
	// CacheDir keeps indexes and chart archives between runs (created 0700, files 0600).
	CacheDir string
	// Offline reads only CacheDir: a repository or version not cached is an error saying so.
	Offline bool
	// Timeout bounds each repository read (index, tag list, one archive).
	Timeout time.Duration
	// MaxIndexBytes bounds an index.yaml; MaxChartBytes a chart archive.
	MaxIndexBytes, MaxChartBytes int64
	// RepositoryConfig is Helm's repositories.yaml and RegistryConfig its registry
	// config.json; empty means Helm's defaults ($HELM_REPOSITORY_CONFIG, ...).
	RepositoryConfig, RegistryConfig string
	// Credentials, when set, names credentials for a repository URL that Helm's
	// configuration does not (the GitOps objects' secrets).
	Credentials func(repository string) (Credentials, bool)
}

// ErrNotBuilt is returned until the reader is written.
var ErrNotBuilt = errors.New("chart repository reader not built yet")

// Reader reads chart repositories.
type Reader struct{ opts Options }

// New returns a Reader.
func New(opts Options) (*Reader, error) { return &Reader{opts: opts}, nil }

// Versions lists the versions of ref.Chart the repository offers, ascending by semver;
// versions that are not semver are left out.
func (r *Reader) Versions(ctx context.Context, ref Ref) ([]Version, error) { return nil, ErrNotBuilt }

// Chart fetches and loads one version of ref.Chart.
func (r *Reader) Chart(ctx context.Context, ref Ref, version string) (*chartv2.Chart, error) {
	return nil, ErrNotBuilt
}

// Locate finds the repository of a Helm release's chart among the repositories Helm's
// repositories.yaml names: one whose index holds chart at version.
func (r *Reader) Locate(ctx context.Context, chart, version string) (Ref, error) {
	return Ref{}, ErrNotBuilt
}
