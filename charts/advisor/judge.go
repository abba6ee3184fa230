package advisor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// batchNamespace is the namespace a version is judged in inside a batch: each version is a
// release of its own there, so a finding names the versions it is about by namespace, and
// several subjects' versions share one evaluation. It cannot be a real namespace: those are
// DNS labels, without "~".
func batchNamespace(i int) string { return fmt.Sprintf("~advised-%d", i) }

// judge evaluates versions[i] as searches[i]'s release, setting each one's Blocks: by target,
// the keys of the blocker findings raised about it, as they read for the real release, each
// once. Each target is judged on the APIs the version renders there (byTarget[i][t]; a nil
// map means the version's APIs at every target: a stored manifest). The versions are split
// into one batch per worker and target; an evaluation that fails is every version of its
// batch's Error.
func (a *advisor) judge(ctx context.Context, searches []*search, versions []inventory.ChartVersionJudged, byTarget []map[string][]string) {
	var todo []int
	for i, v := range versions {
		if v.Error == "" {
			todo = append(todo, i)
		}
	}
	var batches []batch
	for _, t := range a.opts.Targets {
		for _, idx := range split(todo, a.opts.Workers) {
			batches = append(batches, batch{idx, t})
		}
	}
	failed := make([]error, len(batches))
	reports := make([][]*report.Report, len(batches))
	a.parallel(len(batches), func(b int) {
		apisAt := func(i int) []string {
			if byTarget[i] == nil {
				return versions[i].APIs
			}
			return byTarget[i][batches[b].target]
		}
		reports[b], failed[b] = a.evaluate(ctx, searches, versions, batches[b], apisAt)
	})
	for b, bt := range batches {
		if failed[b] != nil {
			for _, i := range bt.idx {
				versions[i].Error = fmt.Sprintf("judge version: %v", failed[b])
				versions[i].Blocks = nil
			}
			continue
		}
		byNamespace := map[string]int{}
		for _, i := range bt.idx {
			byNamespace[batchNamespace(i)] = i
		}
		for _, rep := range reports[b] {
			for _, t := range rep.Targets {
				for _, f := range t.Findings {
					a.attribute(f, t.Target, byNamespace, searches, versions)
				}
			}
		}
	}
	for _, i := range todo {
		if versions[i].Error != "" {
			continue
		}
		for t, keys := range versions[i].Blocks {
			versions[i].Blocks[t] = sortedStrings(keys)
		}
	}
}

// batch is the versions (by index) judged together at one target.
type batch struct {
	idx    []int
	target string
}

// evaluate judges a batch twice: as Helm releases in a cluster (the Helm and add-on rules:
// kubeVersion, stored manifest, add-on lines) and as the manifests they render (the API
// rules: removed, and not served until a later minor), since the Helm rules judge a
// release's manifest only for removed APIs and `helm upgrade` refuses any kind the target
// does not serve.
func (a *advisor) evaluate(ctx context.Context, searches []*search, versions []inventory.ChartVersionJudged, b batch, apisAt func(i int) []string) ([]*report.Report, error) {
	var out []*report.Report
	for _, doc := range []*inventory.Document{a.batchDoc(searches, versions, b.idx, apisAt), a.filesDoc(b.idx, apisAt)} {
		rep, err := a.opts.Engine.Evaluate(ctx, doc, []string{b.target}, a.opts.Now)
		if err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}

// attribute adds a blocker finding's key to each version of the batch it names.
func (a *advisor) attribute(f report.Finding, target string, byNamespace map[string]int, searches []*search, versions []inventory.ChartVersionJudged) {
	if f.Severity != report.SeverityBlocker {
		return
	}
	for _, ns := range f.Namespaces {
		i, ok := byNamespace[ns]
		if !ok || versions[i].Error != "" {
			continue
		}
		if versions[i].Blocks == nil {
			versions[i].Blocks = map[string][]string{}
		}
		key := realKey(f.Key, ns, searches[i].subject.Namespace)
		versions[i].Blocks[target] = append(versions[i].Blocks[target], key)
	}
}

// realKey is a finding's key as the release in its real namespace gets it: the batch
// namespace's path segment replaced.
func realKey(key, batchNS, ns string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		if p == batchNS {
			parts[i] = ns
		}
	}
	return strings.Join(parts, "/")
}

// batchDoc is a cluster inventory holding only the versions idx names, each as a deployed
// Helm release of the subject's name in its batch namespace, with the chart's kubeVersion and
// its rendered (or stored) APIs as the release's manifest: what the Helm and add-on rules
// read. It says what it leaves out, so no gap reads as a finding.
func (a *advisor) batchDoc(searches []*search, versions []inventory.ChartVersionJudged, idx []int, apisAt func(i int) []string) *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster, CollectedAt: a.opts.Now,
		Capabilities: map[string]inventory.Capability{
			inventory.CapHelm:     {Available: true},
			inventory.CapAPIUsage: {Available: true},
			inventory.CapAddons:   {Available: true},
		},
		APIUsage: []inventory.APIUsage{},
	}
	for _, i := range idx {
		s, v, ns := searches[i].subject, versions[i], batchNamespace(i)
		doc.HelmReleases = append(doc.HelmReleases, inventory.HelmRelease{
			Name: s.Name, Namespace: ns, Chart: s.Chart, ChartVersion: v.Version, AppVersion: v.AppVersion,
			KubeVersion: v.KubeVersion, Status: "deployed", Revision: 1, ManifestAPIs: usage(apisAt(i), ns),
		})
	}
	return doc
}

// filesDoc is a files-mode inventory of the manifests the versions idx names render, each
// version's in its batch namespace: one APIUsage row per API, counting the versions that
// render it. It holds what collectors/files would read of them, and says, as files mode
// does, that what only a cluster shows is not available.
func (a *advisor) filesDoc(idx []int, apisAt func(i int) []string) *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles, ClusterID: "files", CollectedAt: a.opts.Now,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}},
	}
	for _, c := range []string{inventory.CapVersions, inventory.CapHelm, inventory.CapDeprecatedCalls, inventory.CapAddons} {
		doc.Capabilities[c] = inventory.Capability{Available: false, Reason: "files mode"}
	}
	rows := map[string]*inventory.APIUsage{}
	for _, i := range idx {
		ns := batchNamespace(i)
		for _, u := range usage(apisAt(i), ns) {
			k := u.Group + "/" + u.Version + "/" + u.Kind
			if r, ok := rows[k]; ok {
				r.Count++
				r.Namespaces[ns] = 1
				continue
			}
			rows[k] = &u
		}
	}
	doc.APIUsage = make([]inventory.APIUsage, 0, len(rows))
	for _, r := range rows {
		doc.APIUsage = append(doc.APIUsage, *r)
	}
	inventory.SortAPIUsage(doc.APIUsage)
	return doc
}

// usage spells "apiVersion Kind" entries as one object each in namespace ns.
func usage(apis []string, ns string) []inventory.APIUsage {
	out := make([]inventory.APIUsage, 0, len(apis))
	for _, api := range apis {
		apiVersion, kind, ok := strings.Cut(api, " ")
		if !ok {
			continue
		}
		group, version, found := strings.Cut(apiVersion, "/")
		if !found {
			group, version = "", apiVersion
		}
		out = append(out, inventory.APIUsage{Group: group, Version: version, Kind: kind, Count: 1, Namespaces: map[string]int{ns: 1}})
	}
	inventory.SortAPIUsage(out)
	return out
}

// split deals idx into at most n batches of near equal size, in order.
func split(idx []int, n int) [][]int {
	if len(idx) == 0 {
		return nil
	}
	if n > len(idx) {
		n = len(idx)
	}
	var out [][]int
	size := (len(idx) + n - 1) / n
	for lo := 0; lo < len(idx); lo += size {
		out = append(out, idx[lo:min(lo+size, len(idx))])
	}
	return out
}

func sortedStrings(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}
