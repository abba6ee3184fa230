// Package repo reads chart repositories for the chart advisor: classic HTTP repositories
// through their index.yaml, and OCI registries, with the Helm SDK's own getters and registry
// client, the credentials Helm's configuration or the GitOps objects name, a deadline, a size
// bound and a cache directory.
package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
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
	// CertPEM, KeyPEM and CAPEM are a client certificate, its key and a CA bundle held in
	// memory, as a GitOps Secret carries them; each is used where its file is not named.
	CertPEM, KeyPEM, CAPEM []byte
	InsecureSkipTLSVerify  bool
	PassCredentialsAll     bool
}

// Options configure a Reader. Zero values take the defaults named on each field.
type Options struct {
	// CacheDir keeps indexes and chart archives between runs (created 0700, files 0600);
	// empty means DefaultCacheDir().
	CacheDir string
	// Offline reads only CacheDir: a repository or version not cached is an error saying so.
	Offline bool
	// Timeout bounds each repository read (index, tag list, one archive); 0 means 30s.
	Timeout time.Duration
	// MaxIndexBytes bounds an index.yaml (0 means 64 MiB); MaxChartBytes a chart archive
	// (0 means 16 MiB).
	MaxIndexBytes, MaxChartBytes int64
	// RepositoryConfig is Helm's repositories.yaml and RegistryConfig its registry
	// config.json; empty means Helm's defaults ($HELM_REPOSITORY_CONFIG, ...).
	RepositoryConfig, RegistryConfig string
	// Credentials, when set, names credentials for a repository URL that Helm's
	// configuration does not (the GitOps objects' secrets).
	Credentials func(repository string) (Credentials, bool)
}

// Defaults of Options.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxIndexBytes = 64 << 20
	DefaultMaxChartBytes = 16 << 20
)

// DefaultCacheDir is where a Reader caches when Options.CacheDir is empty:
// upgradescope/charts under the user's cache directory.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a chart cache directory (set one explicitly): %w", err)
	}
	return filepath.Join(dir, "upgradescope", "charts"), nil
}

// Reader reads chart repositories. It is safe for concurrent use: within one Reader each
// index and tag list is downloaded at most once and concurrent callers share the download.
type Reader struct {
	opts  Options
	cache cache

	indexes  flight[*repov1.IndexFile]
	versions flight[[]Version]
	tags     flight[[]string]
	charts   flight[string]
	// hung fails an archive read fast on a repository an earlier one timed out on.
	hung hung

	helmReposOnce sync.Once
	helmRepos     *helmRepos
}

// New returns a Reader with opts' defaults filled in; it creates the cache directory.
func New(opts Options) (*Reader, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxIndexBytes <= 0 {
		opts.MaxIndexBytes = DefaultMaxIndexBytes
	}
	if opts.MaxChartBytes <= 0 {
		opts.MaxChartBytes = DefaultMaxChartBytes
	}
	if opts.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		opts.CacheDir = dir
	}
	c, err := openCache(opts.CacheDir)
	if err != nil {
		return nil, err
	}
	return &Reader{opts: opts, cache: c}, nil
}

// Versions lists the versions of ref.Chart the repository offers, ascending by semver;
// versions that are not semver are left out. A classic index without the chart is an error.
func (r *Reader) Versions(ctx context.Context, ref Ref) ([]Version, error) {
	if isOCI(ref.Repository) {
		return r.ociVersions(ctx, ref)
	}
	// Sorting parses every version, which costs more than the memoised index; the advisor
	// asks for one chart once per release, so the sorted list is memoised too.
	vs, err := r.versions.do(ctx, repoKey(ref.Repository)+"\x00"+ref.Chart, func() ([]Version, error) {
		idx, err := r.index(ctx, ref.Repository)
		if err != nil {
			return nil, err
		}
		if _, ok := idx.Entries[ref.Chart]; !ok {
			return nil, fmt.Errorf("index of %s has no chart %s", repoKey(ref.Repository), ref.Chart)
		}
		return versionsOf(idx, ref.Chart), nil
	})
	return slices.Clone(vs), err
}

// Chart fetches and loads one version of ref.Chart. A chart whose metadata names another
// chart or version than asked is refused.
func (r *Reader) Chart(ctx context.Context, ref Ref, version string) (*chartv2.Chart, error) {
	var (
		ch  *chartv2.Chart
		err error
	)
	if isOCI(ref.Repository) {
		ch, err = r.ociChart(ctx, ref, version)
	} else {
		ch, err = r.classicChart(ctx, ref, version)
	}
	if err != nil {
		return nil, err
	}
	if ch.Metadata == nil || ch.Metadata.Name != ref.Chart || ch.Metadata.Version != version {
		got := "no metadata"
		if ch.Metadata != nil {
			got = ch.Metadata.Name + " " + ch.Metadata.Version
		}
		return nil, fmt.Errorf("chart %s %s from %s is %s", ref.Chart, version, Redact(ref.Repository), got)
	}
	return ch, nil
}

func isOCI(repository string) bool { return strings.HasPrefix(repository, "oci://") }
