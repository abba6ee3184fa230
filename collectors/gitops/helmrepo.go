package gitops

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgradescope/upgradescope/inventory"
)

// helmRepositoryVersions in the order they are preferred.
var helmRepositoryVersions = []string{"v1", "v1beta2"}

// helmRepositoryURL is a HelmRepository's spec.url, sanitized.
func helmRepositoryURL(u *unstructured.Unstructured) string {
	url, _, _ := unstructured.NestedString(u.Object, "spec", "url")
	return SanitizeURL(strings.TrimSpace(url))
}

// applyHelmRepositories fills the repository URL of each Flux chart whose HelmRepository
// urls holds ("namespace/name" → URL), in charts and in res.Values.
func applyHelmRepositories(res *Result, charts []inventory.GitopsChart, urls map[string]string) {
	for i := range charts {
		c := &charts[i]
		key := ValuesKey(c.Tool, c.Namespace, c.Name)
		v, ok := res.Values[key]
		if c.Tool != inventory.ToolFlux || !ok || v.HelmRepository == "" || urls[v.HelmRepository] == "" {
			continue
		}
		v.RepoURL = urls[v.HelmRepository]
		res.Values[key] = v
		if c.RepoURL == "" {
			c.RepoURL = v.RepoURL
		}
	}
}

// ResolveHelmRepositories reads the HelmRepositories the Flux charts of the last Read point
// to, one get each, and fills their URLs into charts and values, noting the Secrets each
// names for ReadCredentials. Read leaves them out, so a
// scan that does not advise charts makes no request for them; one that cannot read a
// HelmRepository leaves its chart without a repository, which the advisor says.
func (r *Reader) ResolveHelmRepositories(ctx context.Context, charts []inventory.GitopsChart, values map[string]ChartValues) {
	served, err := r.servedVersions(ctx)
	if err != nil {
		return
	}
	version := firstServed(served[sourceGroup], helmRepositoryVersions)
	if version == "" {
		return
	}
	gvr := schema.GroupVersionResource{Group: sourceGroup, Version: version, Resource: "helmrepositories"}
	urls := map[string]string{}
	auths := map[string]fluxAuth{}
	for _, v := range values {
		if v.HelmRepository == "" {
			continue
		}
		if _, done := urls[v.HelmRepository]; done {
			continue
		}
		ns, name, _ := strings.Cut(v.HelmRepository, "/")
		r.Requests++
		u, err := r.dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			urls[v.HelmRepository] = ""
			continue
		}
		urls[v.HelmRepository] = helmRepositoryURL(u)
		auths[v.HelmRepository] = helmRepositoryAuth(u)
	}
	applyHelmRepositories(&Result{Values: values}, charts, urls)
	for key, v := range values {
		if a, ok := auths[v.HelmRepository]; ok && v.RepoURL != "" {
			v.auth = a
			values[key] = v
		}
	}
}
