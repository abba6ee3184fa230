package cluster

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
)

// Bounds on one stored release: a record past them is skipped and named, never decoded.
// MaxReleaseValues bounds the JSON values outside strings (chart values, configuration,
// hooks), each of which the Helm SDK decodes into a Go value: 16 MiB of "1," would be 8
// million of them. A release's manifest is one string there; its documents are bounded by
// files.MaxDocumentNodes when it is read.
const (
	MaxReleaseStoredBytes  = 4 << 20
	MaxReleaseDecodedBytes = 16 << 20
	MaxReleaseValues       = 500_000
)

// releaseRecord is one revision's storage object as its metadata describes it.
type releaseRecord struct {
	namespace, name, key, status, resourceVersion string
	revision                                      int
}

// cachedRelease is a decoded record, kept while its resourceVersion holds: the agent's next
// tick lists metadata and fetches only what changed.
type cachedRelease struct {
	resourceVersion string
	release         inventory.HelmRelease
	values          map[string]any // the release's user-supplied values (rel.Config)
	unread          []string       // manifest documents that could not be read
	err             error          // a record refused once is refused again without refetching
}

// Helm reads the installed revision of every release from Helm's storage, Secrets (Helm's
// default) and ConfigMaps, through the Helm 4 SDK's drivers, which read what Helm 3 wrote
// too. Records are listed metadata-only by their owner=helm label and fetched one by one.
// manifestOpts says which of the stored manifest's APIs to record.
func (c *Collector) Helm(ctx context.Context, doc *inventory.Document, manifestOpts files.Options) inventory.Capability {
	meta, err := metadata.NewForConfig(c.config)
	if err != nil {
		return unavailable("metadata client", err)
	}
	var skipped []string
	read := 0
	c.manifestsUnread = nil
	c.releaseValues = map[string]map[string]any{}
	for _, d := range []struct{ name, resource string }{{"secrets", "secrets"}, {"configmaps", "configmaps"}} {
		records, err := listReleaseRecords(ctx, meta, d.resource)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s driver: %v", d.name, err))
			continue
		}
		read++
		for _, r := range installed(records) {
			cacheKey := d.name + "/" + r.namespace + "/" + r.key
			hit, ok := c.helmCache[cacheKey]
			if ok && hit.resourceVersion == r.resourceVersion && hit.err != nil {
				skipped = append(skipped, fmt.Sprintf("%s/%s: %v", r.namespace, r.name, hit.err))
				continue
			}
			if ok && hit.resourceVersion == r.resourceVersion {
				doc.HelmReleases = append(doc.HelmReleases, hit.release)
				c.releaseValues[r.namespace+"/"+r.name] = hit.values
				skipped = append(skipped, hit.unread...)
				c.manifestsUnread = append(c.manifestsUnread, hit.unread...)
				continue
			}
			rel, err := c.fetchRelease(ctx, d.name, r)
			if err != nil {
				if !isTransient(err) {
					c.helmCache[cacheKey] = cachedRelease{resourceVersion: r.resourceVersion, err: err}
				}
				skipped = append(skipped, fmt.Sprintf("%s/%s: %v", r.namespace, r.name, err))
				continue
			}
			out, unread := toInventory(rel, manifestOpts)
			c.helmCache[cacheKey] = cachedRelease{resourceVersion: r.resourceVersion, release: out, unread: unread, values: rel.Config}
			doc.HelmReleases = append(doc.HelmReleases, out)
			c.releaseValues[r.namespace+"/"+r.name] = rel.Config
			skipped = append(skipped, unread...)
			c.manifestsUnread = append(c.manifestsUnread, unread...)
		}
	}
	sort.Slice(doc.HelmReleases, func(i, j int) bool {
		a, b := doc.HelmReleases[i], doc.HelmReleases[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	if read == 0 {
		return inventory.Capability{Available: false, Reason: fmt.Sprint(skipped), Skipped: skipped}
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: fmt.Sprintf("%d release record(s), driver(s) or manifest document(s) not read", len(skipped)), Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}

// ReleaseValues are the user-supplied values (helm install -f/--set) of the releases the last
// Helm call read, by "namespace/name". They can hold secrets: they are for rendering the
// release's chart (the chart advisor) and never go into the inventory, a log or a report.
// The maps are shared with the collector's cache: callers must not modify them.
func (c *Collector) ReleaseValues() map[string]map[string]any { return c.releaseValues }

func listReleaseRecords(ctx context.Context, meta metadata.Interface, resource string) ([]releaseRecord, error) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: resource}
	opts := metav1.ListOptions{LabelSelector: "owner=helm", Limit: PageSize}
	var out []releaseRecord
	for {
		page, err := meta.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Items {
			rev, _ := strconv.Atoi(o.Labels["version"])
			out = append(out, releaseRecord{
				namespace: o.Namespace, name: o.Labels["name"], key: o.Name, status: o.Labels["status"],
				resourceVersion: o.ResourceVersion, revision: rev,
			})
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// installed keeps, per release, the revision Helm considers installed: the deployed one,
// else the newest that did not fail. Uninstalled releases kept with history are dropped.
func installed(records []releaseRecord) []releaseRecord {
	best := map[[2]string]releaseRecord{}
	for _, r := range records {
		k := [2]string{r.namespace, r.name}
		cur, ok := best[k]
		if !ok || rank(r) > rank(cur) || rank(r) == rank(cur) && r.revision > cur.revision {
			best[k] = r
		}
	}
	var out []releaseRecord
	for _, r := range best {
		if r.status != "uninstalled" && r.status != "uninstalling" {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].namespace+"/"+out[i].name < out[j].namespace+"/"+out[j].name })
	return out
}

func rank(r releaseRecord) int {
	switch r.status {
	case "deployed":
		return 3
	case "failed":
		return 1
	}
	return 2
}

// fetchRelease reads one record through the Helm driver, behind a guard that refuses a
// record too large to decode safely.
func (c *Collector) fetchRelease(ctx context.Context, driverName string, r releaseRecord) (*releasev1.Release, error) {
	var d driver.Driver
	switch driverName {
	case "secrets":
		d = driver.NewSecrets(boundedSecrets{c.client.CoreV1().Secrets(r.namespace), ctx})
	default:
		d = driver.NewConfigMaps(boundedConfigMaps{c.client.CoreV1().ConfigMaps(r.namespace), ctx})
	}
	got, err := d.Get(r.key)
	if err != nil {
		return nil, err
	}
	rel, ok := got.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("unsupported release type %T", got)
	}
	return rel, nil
}

// isTransient is true for errors a later tick may not see again (timeouts, throttling).
func isTransient(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// checkPayload refuses a stored release larger than the bounds, stored or decompressed, or
// holding more JSON values than MaxReleaseValues.
func checkPayload(stored []byte) error {
	if len(stored) > MaxReleaseStoredBytes {
		return fmt.Errorf("stored release larger than %d MiB", MaxReleaseStoredBytes>>20)
	}
	raw, err := base64.StdEncoding.DecodeString(string(stored))
	if err != nil {
		return fmt.Errorf("decode release: %w", err)
	}
	var decoded io.Reader = bytes.NewReader(raw)
	if len(raw) >= 3 && bytes.Equal(raw[:3], []byte{0x1f, 0x8b, 0x08}) {
		zr, err := gzip.NewReader(decoded)
		if err != nil {
			return fmt.Errorf("decompress release: %w", err)
		}
		decoded = zr
	}
	var values jsonValueCounter
	n, err := io.Copy(&values, io.LimitReader(decoded, MaxReleaseDecodedBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("decompress release: %w", err)
	case n > MaxReleaseDecodedBytes:
		return fmt.Errorf("release larger than %d MiB decompressed", MaxReleaseDecodedBytes>>20)
	case values.n > MaxReleaseValues:
		return fmt.Errorf("release of more than %d JSON values refused", MaxReleaseValues)
	}
	return nil
}

// jsonValueCounter counts, in the JSON written to it, the punctuation that starts a value
// outside strings: an upper bound on the values a decoder makes of it.
type jsonValueCounter struct {
	n             int
	inString, esc bool
}

func (c *jsonValueCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		switch {
		case c.esc:
			c.esc = false
		case c.inString:
			c.esc = b == '\\'
			c.inString = b != '"'
		case b == '"':
			c.inString = true
		case b == ',' || b == ':' || b == '[' || b == '{':
			c.n++
		}
	}
	return len(p), nil
}

// boundedSecrets hands the Helm driver only records within bounds.
type boundedSecrets struct {
	typedcorev1.SecretInterface
	ctx context.Context
}

func (b boundedSecrets) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	s, err := b.SecretInterface.Get(b.ctx, name, opts)
	if err != nil {
		return nil, err
	}
	if err := checkPayload(s.Data["release"]); err != nil {
		return nil, err
	}
	return s, nil
}

type boundedConfigMaps struct {
	typedcorev1.ConfigMapInterface
	ctx context.Context
}

func (b boundedConfigMaps) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	cm, err := b.ConfigMapInterface.Get(b.ctx, name, opts)
	if err != nil {
		return nil, err
	}
	if err := checkPayload([]byte(cm.Data["release"])); err != nil {
		return nil, err
	}
	return cm, nil
}

// toInventory also returns the manifest's documents that could not be read and might have
// held an API, named by release and line, for the capability's skipped list.
func toInventory(rel *releasev1.Release, opts files.Options) (inventory.HelmRelease, []string) {
	out := inventory.HelmRelease{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version}
	if rel.Info != nil {
		out.Status = string(rel.Info.Status)
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		m := rel.Chart.Metadata
		out.Chart, out.ChartVersion, out.AppVersion, out.KubeVersion = m.Name, m.Version, m.AppVersion, m.KubeVersion
	}
	var warnings []files.Warning
	out.ManifestAPIs, warnings = files.Manifest("manifest", []byte(rel.Manifest), opts)
	var unread []string
	for _, w := range warnings {
		if w.Partial {
			unread = append(unread, fmt.Sprintf("%s/%s: %s", rel.Namespace, rel.Name, w))
		}
	}
	return out, unread
}
