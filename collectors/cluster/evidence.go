package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/upgradescope/upgradescope/inventory"
)

// Namespaces records every namespace with the team its teamLabel names.
func (c *Collector) Namespaces(ctx context.Context, doc *inventory.Document, teamLabel string) error {
	opts := metav1.ListOptions{Limit: PageSize}
	for {
		page, err := c.client.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list namespaces: %w", err)
		}
		for _, ns := range page.Items {
			doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: ns.Name, Team: ns.Labels[teamLabel]})
		}
		if page.Continue == "" {
			return nil
		}
		opts.Continue = page.Continue
	}
}

// Addons records add-on evidence: the images of running pods grouped into repositories and
// versions with their namespaces (and, for the images watch observes, recommended labels),
// and IngressClass controllers. The add-on pack decides. Pods are not named: their names
// change with every rollout, and a live finding names the namespaces.
func (c *Collector) Addons(ctx context.Context, doc *inventory.Document, watch inventory.ImageWatch) inventory.Capability {
	capability, _ := c.addons(ctx, doc, watch, nil)
	return capability
}

// addons is Addons, handing each pod to each as well (when each is set); podsErr is why the
// pods could not be listed.
func (c *Collector) addons(ctx context.Context, doc *inventory.Document, watch inventory.ImageWatch, each func(*corev1.Pod)) (_ inventory.Capability, podsErr error) {
	images := inventory.NewImageSet(watch)
	opts := metav1.ListOptions{Limit: PageSize}
	for {
		page, err := c.client.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return unavailable("list pods", err), err
		}
		for i := range page.Items {
			addPod(&page.Items[i], images)
			if each != nil {
				each(&page.Items[i])
			}
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	doc.WorkloadImages, doc.WorkloadImagesOmitted = images.List(), images.Omitted()
	return c.ingressClasses(ctx, doc), nil
}

// ingressClasses records the IngressClass controllers; they are listed every collection.
func (c *Collector) ingressClasses(ctx context.Context, doc *inventory.Document) inventory.Capability {
	classes, err := c.client.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return inventory.Capability{Available: true, Partial: true, Reason: "ingress classes: " + err.Error(), Skipped: []string{"networking.k8s.io/v1 ingressclasses"}}
	}
	for _, ic := range classes.Items {
		doc.IngressClasses = append(doc.IngressClasses, inventory.IngressClass{Name: ic.Name, Controller: ic.Spec.Controller})
	}
	return inventory.Capability{Available: true}
}

func addPod(p *corev1.Pod, images *inventory.ImageSet) {
	labels := map[string]string{}
	for _, l := range inventory.RecommendedLabels {
		if v := p.Labels[l]; v != "" {
			labels[l] = v
		}
	}
	for _, ctr := range p.Spec.InitContainers {
		images.Add(ctr.Image, p.Namespace, labels, nil)
	}
	for _, ctr := range p.Spec.Containers {
		images.Add(ctr.Image, p.Namespace, labels, nil)
	}
}

// CRDs records every CustomResourceDefinition's versions and storedVersions, and the custom
// resources still written through a deprecated served version (the same authorship rule as
// built-in APIs, listed at the storage version).
func (c *Collector) CRDs(ctx context.Context, doc *inventory.Document) inventory.Capability {
	return c.crds(ctx, doc, nil)
}

// crds is CRDs, handing each CRD that converts through a webhook to the pre-flight pass.
func (c *Collector) crds(ctx context.Context, doc *inventory.Document, pf *preflightPass) inventory.Capability {
	ext, err := newExtensionsClient(c.config)
	if err != nil {
		return unavailable("crds", err)
	}
	list, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return unavailable("list crds", err)
	}
	meta, err := metadata.NewForConfig(c.config)
	if err != nil {
		return unavailable("metadata client", err)
	}
	var skipped []string
	for i := range list.Items {
		crd := &list.Items[i]
		pf.conversion(crd)
		out := inventory.CRD{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Plural: crd.Spec.Names.Plural, StoredVersions: crd.Status.StoredVersions}
		storage := ""
		for _, v := range crd.Spec.Versions {
			cv := inventory.CRDVersion{Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated}
			if v.DeprecationWarning != nil {
				cv.DeprecationWarning = *v.DeprecationWarning
			}
			out.Versions = append(out.Versions, cv)
			if v.Storage {
				storage = v.Name
			}
		}
		for _, v := range out.Versions {
			if !v.Deprecated || !v.Served || storage == "" {
				continue
			}
			at := served{gvr: schema.GroupVersionResource{Group: crd.Spec.Group, Version: storage, Resource: crd.Spec.Names.Plural}}
			usage, _, err := c.attribute(ctx, meta, at, []FlaggedKind{{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}})
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s/%s %s: %v", crd.Spec.Group, v.Name, crd.Spec.Names.Kind, err))
				continue
			}
			out.Usage = append(out.Usage, usage...)
		}
		doc.CRDs = append(doc.CRDs, out)
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: fmt.Sprintf("%d custom resource kind(s) not read", len(skipped)), Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}
