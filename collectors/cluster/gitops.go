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
	res := c.gitops.Read(ctx)
	c.gitopsValues = res.Values
	gitops.Apply(doc, res)
}

// GitOpsValues are the values the GitOps objects the last GitOps call read declare, by
// "tool/namespace/name" (gitops.ValuesKey). Like ReleaseValues, never in the inventory.
func (c *Collector) GitOpsValues() map[string]gitops.ChartValues { return c.gitopsValues }

// ResolveHelmRepositories reads the URLs of the Flux HelmRepositories the last GitOps call's
// charts come from into doc's GitOps charts and GitOpsValues, and the Secrets Flux and
// Argo CD read those repositories with (GitOpsCredentials): the chart advisor reads those
// repositories. A scan that does not advise charts does not call it, and reads no Secret.
func (c *Collector) ResolveHelmRepositories(ctx context.Context, doc *inventory.Document) {
	c.gitopsCreds = nil
	if c.gitops == nil {
		return
	}
	c.gitops.ResolveHelmRepositories(ctx, doc.GitopsCharts, c.gitopsValues)
	c.gitopsCreds = c.gitops.ReadCredentials(ctx, doc.GitopsCharts, c.gitopsValues)
}

// GitOpsCredentials are the repository credentials the last ResolveHelmRepositories read.
// Never in the inventory, never logged.
func (c *Collector) GitOpsCredentials() []gitops.RepositoryCredential { return c.gitopsCreds }
