package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
)

// index returns the repository's index: downloaded once per Reader (online) and cached, or
// read from the cache (offline).
func (r *Reader) index(ctx context.Context, repository string) (*repov1.IndexFile, error) {
	key := repoKey(repository)
	return r.indexes.do(ctx, key, func() (*repov1.IndexFile, error) {
		path := r.cache.path("index", ".yaml", key)
		if r.opts.Offline {
			if err := r.cache.has(path, r.opts.MaxIndexBytes); err != nil {
				return nil, r.cache.notCached(key, err)
			}
		} else if err := r.downloadIndex(ctx, repository, path); err != nil {
			return nil, err
		}
		idx, err := repov1.LoadIndexFile(path)
		if err != nil {
			return nil, fmt.Errorf("parse the index of %s: %w", key, err)
		}
		return idx, nil
	})
}

func (r *Reader) downloadIndex(ctx context.Context, repository, path string) error {
	clean, _, _ := stripUserinfo(repository)
	href, err := repov1.ResolveReferenceURL(clean, "index.yaml")
	if err != nil {
		return fmt.Errorf("read index of %s: %w", Redact(repository), err)
	}
	data, err := r.download(ctx, repository, href, r.opts.MaxIndexBytes, "index")
	if err != nil {
		return err
	}
	return r.cache.write(path, data)
}

// versionsOf lists chart's versions in idx ascending by semver, leaving out those that
// are not semver (as Helm parses it, so "v1.2" is read as 1.2.0 and keeps its spelling).
func versionsOf(idx *repov1.IndexFile, chart string) []Version {
	type parsed struct {
		v   Version
		ver *semver.Version
	}
	var all []parsed
	for _, cv := range idx.Entries[chart] {
		if cv == nil || cv.Metadata == nil {
			continue
		}
		ver, err := semver.NewVersion(cv.Version)
		if err != nil {
			continue
		}
		all = append(all, parsed{Version{
			Version: cv.Version, AppVersion: cv.AppVersion, KubeVersion: cv.KubeVersion, Known: true,
		}, ver})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ver.LessThan(all[j].ver) })
	out := make([]Version, len(all))
	for i, p := range all {
		out[i] = p.v
	}
	return out
}

// classicChart fetches one version through the index: its first URL, resolved against the
// repository, checked against the index's digest and cached by repository, chart, version
// and digest, so an archive once fetched is never fetched again.
func (r *Reader) classicChart(ctx context.Context, ref Ref, version string) (*chartv2.Chart, error) {
	idx, err := r.index(ctx, ref.Repository)
	if err != nil {
		return nil, err
	}
	key := repoKey(ref.Repository)
	cv := exactVersion(idx, ref.Chart, version)
	if cv == nil {
		return nil, fmt.Errorf("index of %s has no chart %s version %s", key, ref.Chart, version)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("index of %s names no URL for chart %s version %s", key, ref.Chart, version)
	}
	digest := strings.TrimPrefix(cv.Digest, "sha256:")
	path := r.cache.path("chart", ".tgz", key, ref.Chart, version, digest)
	what := fmt.Sprintf("chart %s %s", ref.Chart, version)
	_, err = r.charts.do(ctx, path, func() (string, error) {
		if data, err := r.cache.read(path, r.opts.MaxChartBytes); err == nil && digestMatches(data, digest) {
			return path, nil
		} else if r.opts.Offline {
			if err == nil {
				err = fs.ErrNotExist // a cached archive that fails its digest is as good as none
			}
			return "", r.cache.notCached(key+" "+what, err)
		}
		clean, _, _ := stripUserinfo(ref.Repository)
		href, err := repov1.ResolveReferenceURL(clean, cv.URLs[0])
		if err != nil {
			return "", fmt.Errorf("read %s of %s: %w", what, key, err)
		}
		if err := r.hung.check(key, what); err != nil {
			return "", err
		}
		data, err := r.download(ctx, ref.Repository, href, r.opts.MaxChartBytes, what)
		if err != nil {
			r.hung.note(ctx, key, err)
			return "", err
		}
		if !digestMatches(data, digest) {
			return "", fmt.Errorf("%s from %s does not match the index's digest sha256:%s; refusing it", what, Redact(href), digest)
		}
		return path, r.cache.write(path, data)
	})
	if err != nil {
		return nil, err
	}
	return loadCached(r.cache, path, key, what, r.opts.MaxChartBytes)
}

// exactVersion is chart's entry at version itself: IndexFile.Get would read version as a
// constraint and could answer another version.
func exactVersion(idx *repov1.IndexFile, chart, version string) *repov1.ChartVersion {
	for _, cv := range idx.Entries[chart] {
		if cv != nil && cv.Metadata != nil && cv.Version == version {
			return cv
		}
	}
	return nil
}

// digestMatches says whether data's sha256 is digest (hex); an index without a digest
// accepts any archive.
func digestMatches(data []byte, digest string) bool {
	if digest == "" {
		return true
	}
	sum := sha256.Sum256(data)
	return strings.EqualFold(hex.EncodeToString(sum[:]), digest)
}

func loadCached(c cache, path, repo, what string, limit int64) (*chartv2.Chart, error) {
	data, err := c.read(path, limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s of %s vanished from the chart cache %s", what, repo, c.dir)
		}
		return nil, fmt.Errorf("read %s of %s from the chart cache: %w", what, repo, err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("load %s of %s: %w", what, repo, err)
	}
	return ch, nil
}
