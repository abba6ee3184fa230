package files

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// needsParse says whether a document of this kind holds evidence beyond its count.
func (o Options) needsParse(apiVersion, kind string) bool {
	if o.Watched[apiVersion+"/"+kind] || strings.HasSuffix(kind, "List") {
		return true
	}
	group, _ := splitAPIVersion(apiVersion)
	if !o.BuiltinGroups[group] {
		return true // a custom resource: its CRD decides
	}
	if !o.Known[apiVersion+"/"+kind] {
		return true // an unknown version of a built-in group
	}
	_, workload := probe.TemplatePath(group, kind)
	return workload ||
		kind == "IngressClass" || kind == "Namespace" && group == "" ||
		kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io" ||
		// pre-flight kinds; of ConfigMaps only kube-proxy's, which the callers tell by name
		o.preflight(apiVersion, kind) && !(kind == "ConfigMap" && group == "")
}

// images records the images of a workload's pod template with its recommended labels and
// the workload that runs them.
func (d *fileDecoder) images(n *yaml.Node, group, kind string, ref inventory.ObjectRef) {
	path, ok := probe.TemplatePath(group, kind)
	if !ok {
		return
	}
	template := n
	for _, p := range path {
		template = field(template, p)
	}
	labels := map[string]string{}
	collectLabels(labels, field(n, "metadata"))
	collectLabels(labels, field(template, "metadata"))
	spec := field(template, "spec")
	for _, list := range []string{"initContainers", "containers"} {
		cs := field(spec, list)
		if cs == nil || cs.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range cs.Content {
			if _, image := stringField(c, "image"); image != "" {
				d.res.images = append(d.res.images, imageSeen{image: image, labels: labels, ref: ref})
			}
		}
	}
}

func collectLabels(into map[string]string, meta *yaml.Node) {
	labels := field(meta, "labels")
	for _, l := range inventory.RecommendedLabels {
		if _, v := stringField(labels, l); v != "" {
			into[l] = v
		}
	}
}

func (d *fileDecoder) ingressClass(n *yaml.Node, name string) {
	_, controller := stringField(field(n, "spec"), "controller")
	d.res.ingressClasses = append(d.res.ingressClasses, inventory.IngressClass{Name: name, Controller: controller})
}

func (d *fileDecoder) namespace(n *yaml.Node, name string) {
	ns := inventory.Namespace{Name: name}
	if d.opts.TeamLabel != "" {
		_, ns.Team = stringField(field(field(n, "metadata"), "labels"), d.opts.TeamLabel)
	}
	d.res.namespaces = append(d.res.namespaces, ns)
}

// crd reads a CustomResourceDefinition: v1's spec.versions, or v1beta1's spec.version.
func (d *fileDecoder) crd(n *yaml.Node) {
	spec := field(n, "spec")
	names := field(spec, "names")
	c := inventory.CRD{}
	_, c.Group = stringField(spec, "group")
	_, c.Kind = stringField(names, "kind")
	_, c.Plural = stringField(names, "plural")
	if vs := field(spec, "versions"); vs != nil && vs.Kind == yaml.SequenceNode {
		for _, v := range vs.Content {
			c.Versions = append(c.Versions, crdVersion(v))
		}
	} else if _, v := stringField(spec, "version"); v != "" {
		c.Versions = []inventory.CRDVersion{{Name: v, Served: true, Storage: true}}
	}
	if stored := field(field(n, "status"), "storedVersions"); stored != nil && stored.Kind == yaml.SequenceNode {
		for _, s := range stored.Content {
			if s.Kind == yaml.ScalarNode {
				c.StoredVersions = append(c.StoredVersions, s.Value)
			}
		}
	}
	if c.Group != "" && c.Kind != "" {
		d.res.crds = append(d.res.crds, c)
	}
}

func crdVersion(v *yaml.Node) inventory.CRDVersion {
	var cv inventory.CRDVersion
	_, cv.Name = stringField(v, "name")
	cv.Served = boolField(v, "served")
	cv.Storage = boolField(v, "storage")
	cv.Deprecated = boolField(v, "deprecated")
	_, cv.DeprecationWarning = stringField(v, "deprecationWarning")
	return cv
}

func boolField(m *yaml.Node, key string) bool {
	v := field(m, key)
	return v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && v.Value == "true"
}

// ignoreAnnotation reads an object's own suppression annotations; a rule without a reason
// (inventory.HasReason: a letter or digit, not only invisible characters) is not honoured,
// and says so.
func (d *fileDecoder) ignoreAnnotation(meta *yaml.Node, line int) *inventory.IgnoreAnnotation {
	annotations := field(meta, "annotations")
	_, rules := stringField(annotations, inventory.AnnotationIgnore)
	if rules == "" {
		return nil
	}
	_, reason := stringField(annotations, inventory.AnnotationIgnoreReason)
	if !inventory.HasReason(reason) {
		d.warn(line, inventory.AnnotationIgnore+" without a reason in "+inventory.AnnotationIgnoreReason+" (a letter or digit) is not honoured", false)
		return nil
	}
	return &inventory.IgnoreAnnotation{Rules: rules, Reason: reason}
}
