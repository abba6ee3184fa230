package fix

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
)

// customResource converts a custom resource whose version its CRD among the files does not
// serve. An object of a version the CRD serves, or without its CRD among the files, is left.
func (s *scanner) customResource(d *Doc) {
	crd := s.crds[groupOf(d.Ref.APIVersion)+"/"+d.Ref.Kind]
	if crd == nil {
		return
	}
	from := convert.ParseGVK(d.Ref.APIVersion, d.Ref.Kind)
	if servedByCRD(crd, from.Version) {
		return
	}
	d.Outcome = convertCustomResource(d.Object, crd, s.o.Target, from)
}

// servedByCRD says whether the CRD lists version as served.
func servedByCRD(crd *yaml.Node, version string) bool {
	versions := get(crd, "spec", "versions")
	if versions == nil {
		return false
	}
	for _, v := range versions.Content {
		if scalar(v, "name") == version {
			return scalar(v, "served") == "true"
		}
	}
	return false
}

// convertCustomResource is where convert.CustomResource is called once it exists.
// TODO(i33): call convert.CustomResource(obj, crd, target) when helper convB's change is on
// main; until then a custom resource at a version its CRD does not serve is listed for a
// person, never rewritten.
func convertCustomResource(obj, crd *yaml.Node, target string, from convert.GVK) convert.Outcome {
	_ = target
	return convert.Outcome{From: from, To: from, Manual: []convert.Remark{{
		Line: obj.Line,
		Message: fmt.Sprintf("the CustomResourceDefinition %s does not serve %s; convert it to a served version (%s)",
			scalar(crd, "metadata", "name"), from.Version, strings.Join(servedVersions(crd), ", ")),
	}}}
}

func servedVersions(crd *yaml.Node) []string {
	var out []string
	if versions := get(crd, "spec", "versions"); versions != nil {
		for _, v := range versions.Content {
			if scalar(v, "served") == "true" {
				out = append(out, scalar(v, "name"))
			}
		}
	}
	return out
}
