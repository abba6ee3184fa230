package convert

import (
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// Every pair the knowledge base lists with a replacement has a step, so fix converts every
// object at an API it knows to be removed instead of listing it for a person. A new kb entry
// fails here until its step is written (CONTRIBUTING.md, "Add a conversion").
func TestEveryReplacementTheKnowledgeBaseListsHasAStep(t *testing.T) {
	// Request bodies no manifest holds and the kb pairs with kinds no version serves: kept
	// out knowingly, since nothing could be converted into them.
	noStep := map[string]string{
		"apps/v1beta1/DeploymentRollback": "apps/v1 has no DeploymentRollback: a request body, never stored or written in manifests",
		"apps/v1beta1/Scale":              "a subresource's request body (autoscaling/v1 Scale), never written in manifests",
		"apps/v1beta2/Scale":              "a subresource's request body (autoscaling/v1 Scale), never written in manifests",
		"core/v1/Endpoints":               "deprecated, never removed: EndpointSlices are other objects the control plane writes, not a new version of these",
	}
	k := kbtest.Builtin(t)
	for _, e := range k.APIs() {
		if e.Replacement == "" {
			continue
		}
		_, has := steps[[2]string{e.Key(), e.Replacement}]
		why, excused := noStep[e.Key()]
		switch {
		case !has && !excused:
			t.Errorf("%s → %s: no step registered", e.Key(), e.Replacement)
		case has && excused:
			t.Errorf("%s → %s has a step, but the test excuses it (%s): drop the excuse", e.Key(), e.Replacement, why)
		}
	}
}
