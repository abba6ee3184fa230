package repo

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/registry"
)

// ociVersions lists the chart's tags: fetched once per Reader (online) and cached, or read
// from the cache (offline). A tag says no more than the version, so Known is false.
func (r *Reader) ociVersions(ctx context.Context, ref Ref) ([]Version, error) {
	key := repoKey(ref.Repository) + "/" + ref.Chart
	tags, err := r.tags.do(ctx, key, func() ([]string, error) {
		path := r.cache.path("tags", ".json", key)
		if r.opts.Offline {
			data, err := r.cache.read(path, r.opts.MaxIndexBytes)
			if err != nil {
				return nil, r.cache.notCached(key, err)
			}
			var tags []string
			if err := json.Unmarshal(data, &tags); err != nil {
				return nil, fmt.Errorf("read the tags of %s from the chart cache: %w", key, err)
			}
			return tags, nil
		}
		return r.fetchTags(ctx, ref, path)
	})
	if err != nil {
		return nil, err
	}
	return sortedTags(tags), nil
}

func (r *Reader) fetchTags(ctx context.Context, ref Ref, path string) ([]string, error) {
	key := repoKey(ref.Repository) + "/" + ref.Chart
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	client, t, creds, err := r.registryClient(ctx, ref.Repository, r.opts.MaxIndexBytes)
	if err != nil {
		return nil, fmt.Errorf("read tags of %s: %w", key, err)
	}
	defer t.CloseIdleConnections()
	tags, err := client.Tags(ociName(ref))
	if t.exceeded.Load() {
		return nil, fmt.Errorf("tag list of %s larger than %s", key, sizeText(r.opts.MaxIndexBytes))
	}
	if err != nil {
		return nil, r.readFailure(ctx, "read tags of "+key, err, []string{ref.Repository}, creds)
	}
	data, err := json.Marshal(tags)
	if err != nil {
		return nil, err
	}
	return tags, r.cache.write(path, data)
}

// sortedTags are tags as Versions, ascending by semver; Helm's Tags has already left out
// any tag that is not semver.
func sortedTags(tags []string) []Version {
	type parsed struct {
		tag string
		ver *semver.Version
	}
	all := make([]parsed, 0, len(tags))
	for _, tag := range tags {
		if v, err := semver.NewVersion(tag); err == nil {
			all = append(all, parsed{tag, v})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ver.LessThan(all[j].ver) })
	out := make([]Version, len(all))
	for i, p := range all {
		out[i] = Version{Version: p.tag}
	}
	return out
}

// ociChart pulls one version with Helm's registry client and caches the archive by
// repository, chart and version.
func (r *Reader) ociChart(ctx context.Context, ref Ref, version string) (*chartv2.Chart, error) {
	key := repoKey(ref.Repository) + "/" + ref.Chart
	what := "chart " + ref.Chart + " " + version
	path := r.cache.path("chart", ".tgz", key, version)
	_, err := r.charts.do(ctx, path, func() (string, error) {
		if err := r.cache.has(path, r.opts.MaxChartBytes); err == nil {
			return path, nil
		} else if r.opts.Offline {
			return "", r.cache.notCached(key+" "+version, err)
		}
		repository := repoKey(ref.Repository)
		if err := r.hung.check(repository, what); err != nil {
			return "", err
		}
		err := r.pull(ctx, ref, version, path)
		r.hung.note(ctx, repository, err)
		return path, err
	})
	if err != nil {
		return nil, err
	}
	return loadCached(r.cache, path, key, what, r.opts.MaxChartBytes)
}

func (r *Reader) pull(ctx context.Context, ref Ref, version, path string) error {
	key := repoKey(ref.Repository) + "/" + ref.Chart
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	client, t, creds, err := r.registryClient(ctx, ref.Repository, r.opts.MaxChartBytes)
	if err != nil {
		return fmt.Errorf("pull %s %s: %w", key, version, err)
	}
	defer t.CloseIdleConnections()
	// OCI tags cannot hold '+'; Helm pushes build metadata with '_' instead.
	res, err := client.Pull(ociName(ref)+":"+strings.ReplaceAll(version, "+", "_"), registry.PullOptWithChart(true))
	if t.exceeded.Load() || (err == nil && int64(len(res.Chart.Data)) > r.opts.MaxChartBytes) {
		return fmt.Errorf("chart %s %s of %s larger than %s", ref.Chart, version, Redact(ref.Repository), sizeText(r.opts.MaxChartBytes))
	}
	if err != nil {
		return r.readFailure(ctx, "pull "+key+" "+version, err, []string{ref.Repository}, creds)
	}
	return r.cache.write(path, res.Chart.Data)
}

// registryClient is Helm's registry client for one read of repository, over a transport
// bounded by limit and ctx, with the credentials of Options.Credentials or else Helm's
// registry config.
func (r *Reader) registryClient(ctx context.Context, repository string, limit int64) (*registry.Client, *boundedTransport, Credentials, error) {
	_, creds := r.credentialsFor(repository)
	tlsConf, err := tlsConfig(creds)
	if err != nil {
		return nil, nil, creds, err
	}
	t := newBoundedTransport(ctx, limit, tlsConf)
	opts := []registry.ClientOption{
		registry.ClientOptHTTPClient(&http.Client{Transport: t, Timeout: r.opts.Timeout}),
		registry.ClientOptCredentialsFile(r.registryConfig()),
	}
	if creds.Username != "" || creds.Password != "" {
		opts = append(opts, registry.ClientOptBasicAuth(creds.Username, creds.Password))
	}
	// A registry on loopback is spoken to in plain HTTP: that is how a local registry (and
	// the tests' go-containerregistry one) serves, and the traffic never leaves the host.
	// Any other registry is HTTPS only.
	if isLoopback(repository) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, nil, creds, err
	}
	return client, t, creds, nil
}

func (r *Reader) registryConfig() string {
	if r.opts.RegistryConfig != "" {
		return r.opts.RegistryConfig
	}
	return cli.New().RegistryConfig
}

// ociName is the registry reference of ref's chart without a tag: host/path/chart.
func ociName(ref Ref) string {
	clean, _, _ := stripUserinfo(ref.Repository)
	return strings.TrimSuffix(strings.TrimPrefix(clean, "oci://"), "/") + "/" + ref.Chart
}

func isLoopback(repository string) bool {
	u, err := url.Parse(repository)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
