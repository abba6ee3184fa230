package agent

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/crd"
)

// crdRevisions are the active revisions as the ClusterReadiness status shows them.
func crdRevisions(revs []policyset.Revision) []crd.BundleRevision {
	out := make([]crd.BundleRevision, len(revs))
	for i, r := range revs {
		out[i] = crd.BundleRevision{Name: r.Name, Revision: r.Revision, Source: r.Source}
		if !r.ActivatedAt.IsZero() {
			out[i].ActivatedAt = &metav1.Time{Time: r.ActivatedAt}
		}
	}
	return out
}

// crdUpdate is the set's last poll outcome as the status condition reads it; nil when the
// agent polls nothing.
func crdUpdate(u *policyset.Update) *crd.BundleUpdate {
	if u == nil {
		return nil
	}
	return &crd.BundleUpdate{Err: u.Err, At: u.At}
}
