package cluster

import (
	"context"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

// GitOps reads the charts Argo CD and Flux declare and amends the helm and addons
// capabilities with what they leave unassessed. It runs after Helm and Addons.
func (c *Collector) GitOps(ctx context.Context, doc *inventory.Document) {
	if c.gitops == nil {
		dyn, err := dynamic.NewForConfig(c.config)
		if err != nil {
			return
		}
		meta, err := metadata.NewForConfig(c.config)
		if err != nil {
			return
		}
		c.gitops = gitops.NewReader(dyn, c.client.Discovery(), meta)
	}
	gitops.Apply(doc, c.gitops.Read(ctx))
}
