package gitops

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func (r *Reader) readHelmReleases(ctx context.Context, version, ociVersion string, res *Result) {
	gvr := schema.GroupVersionResource{Group: helmGroup, Version: version, Resource: "helmreleases"}
	var pending []hrChart
	var other, invalid, helmCharts int
	err := r.list(ctx, gvr, "", func(u *unstructured.Unstructured) {
		h := fromHelmRelease(u)
		other += b2i(h.otherCluster)
		invalid += b2i(h.invalidNamespace)
		helmCharts += b2i(h.helmChartRef)
		if !h.otherCluster && !h.invalidNamespace {
			res.FluxCounted = true
		}
		if h.chart != nil {
			res.keepValues(*h.chart, helmReleaseValues(u))
		}
		switch {
		case h.ociRef != "":
			pending = append(pending, h)
		case h.chart != nil:
			res.Charts = append(res.Charts, *h.chart)
		}
	})
	if err != nil {
		res.note(gvr.Resource, err)
	}
	if other > 0 {
		res.gap(false, fmt.Sprintf("%d Flux HelmRelease(s) deploy to other clusters (spec.kubeConfig)", other))
	}
	if invalid > 0 {
		res.gap(false, fmt.Sprintf("%d Flux HelmRelease(s) name a targetNamespace that is no namespace name", invalid))
	}
	if helmCharts > 0 {
		res.gap(true, fmt.Sprintf("%d Flux HelmRelease(s) reference a HelmChart, which names no chart", helmCharts))
	}
	if len(pending) > 0 {
		r.resolveOCI(ctx, ociVersion, pending, res)
	}
}

// resolveOCI reads the OCIRepositories chartRefs point to: one list of their namespace, or one
// cluster-wide list; per namespace where the cluster-wide list is refused; by name where even
// that is refused.
func (r *Reader) resolveOCI(ctx context.Context, version string, pending []hrChart, res *Result) {
	gvr := schema.GroupVersionResource{Group: sourceGroup, Version: version, Resource: "ocirepositories"}
	repos := map[string]*unstructured.Unstructured{}
	keep := func(u *unstructured.Unstructured) { repos[u.GetNamespace()+"/"+u.GetName()] = u.DeepCopy() }
	var firstErr error
	wanted := map[string][]string{} // namespace → names
	for _, h := range pending {
		ns, name, _ := strings.Cut(h.ociRef, "/")
		wanted[ns] = append(wanted[ns], name)
	}
	namespaces := sortedKeys(wanted)
	if version == "" {
		firstErr = fmt.Errorf("ocirepositories.%s is not served", sourceGroup)
	} else if scope := scopeOf(namespaces); !r.listRefusedRecently(gvr, scope) && r.tryList(ctx, gvr, scope, keep) == nil {
		namespaces = nil
	}
	for _, ns := range namespaces {
		if !r.listRefusedRecently(gvr, ns) && r.tryList(ctx, gvr, ns, keep) == nil {
			continue
		}
		for _, name := range wanted[ns] {
			r.Requests++
			u, err := r.dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("get ocirepository %s/%s: %w", ns, name, err)
				}
				continue
			}
			keep(u)
		}
	}
	var unreadable int
	for _, h := range pending {
		repo, ok := repos[h.ociRef]
		if ok && applyOCIRepository(h.chart, repo) {
			res.Charts = append(res.Charts, *h.chart)
			continue
		}
		if firstErr == nil && !ok {
			firstErr = fmt.Errorf("ocirepository %s not found", h.ociRef)
		} else if firstErr == nil {
			firstErr = fmt.Errorf("ocirepository %s names no chart", h.ociRef)
		}
		unreadable++
	}
	if unreadable > 0 {
		reason := fmt.Sprintf("%d Flux chartRef(s) to an OCIRepository that could not be read", unreadable)
		if firstErr != nil {
			reason += ": " + firstErr.Error()
		}
		res.gap(true, reason)
	}
}

// scopeOf is the one namespace every chartRef points into, or "" for a cluster-wide list.
func scopeOf(namespaces []string) string {
	if len(namespaces) == 1 {
		return namespaces[0]
	}
	return ""
}

// tryList lists gvr in namespace and remembers a refusal.
func (r *Reader) tryList(ctx context.Context, gvr schema.GroupVersionResource, namespace string, each func(*unstructured.Unstructured)) error {
	err := r.list(ctx, gvr, namespace, each)
	if apierrors.IsForbidden(err) {
		r.refused[gvr.Resource+"@"+namespace] = r.Clock()
	}
	return err
}

func (r *Reader) listRefusedRecently(gvr schema.GroupVersionResource, namespace string) bool {
	at, ok := r.refused[gvr.Resource+"@"+namespace]
	return ok && r.Clock().Sub(at) < RefusedListTTL
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// workloadMarkers finds a tool whose CRD is not served here (Argo CD running in another
// cluster) by the tracking metadata it leaves on workloads. A role that cannot list workloads
// shows nothing, and that is no gap.
func (r *Reader) workloadMarkers(ctx context.Context, res *Result) {
	for _, resource := range []string{"deployments", "statefulsets", "daemonsets"} {
		gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resource}
		opts := metav1.ListOptions{Limit: 500}
		for {
			r.Requests++
			page, err := r.metadata.Resource(gvr).List(ctx, opts)
			if err != nil {
				break
			}
			for _, o := range page.Items {
				_, tracked := o.Annotations["argocd.argoproj.io/tracking-id"]
				_, instance := o.Labels["argocd.argoproj.io/instance"]
				_, flux := o.Labels["helm.toolkit.fluxcd.io/name"]
				res.ArgoCD = res.ArgoCD || tracked || instance
				res.Flux = res.Flux || flux
			}
			if opts.Continue = page.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
}
