package fix

import "github.com/upgradescope/upgradescope/convert"

// customResource converts a custom resource whose CRD is among the files between the CRD's
// versions, when the version it is written at is not served (convert.CustomResource says
// what the CRD's schemas allow). Without its CRD among the files it is left as it is: scan
// names it as a custom resource whose definition it did not see.
func (s *scanner) customResource(d *Doc) {
	crd := s.crds[groupOf(d.Ref.APIVersion)+"/"+d.Ref.Kind]
	if crd == nil {
		return
	}
	d.Outcome = convert.CustomResource(d.Object, crd, s.o.Target)
}
