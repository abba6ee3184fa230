package fix

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/inventory"
)

// gitopsObject is an Application, HelmRelease, OCIRepository or Kustomization among the
// files, where it is.
type gitopsObject struct {
	file string
	doc  *Doc
}

// index parses the documents other documents' conversion depends on: the CRDs (a custom
// resource converts between its CRD's versions) and the GitOps objects (an object they
// produce is changed in their source, which they name).
func (s *scanner) index(fs []File) {
	var objs []*unstructured.Unstructured
	var found []gitopsObject
	custom := s.customGroups(fs)
	for i := range fs {
		for j := range fs[i].pieces {
			p := &fs[i].pieces[j]
			if text := p.src.text; !p.src.json && containsTemplate(text) {
				continue
			}
			h := p.src.head
			if h.ok && (!indexed(h.apiVersion, h.kind) || h.kind == "CustomResourceDefinition" && !custom.mentioned(p.src.text)) {
				continue
			}
			d := p.toDoc()
			doc, err := parse(&d)
			if err != nil || docRoot(doc) == nil {
				continue
			}
			d.Object, d.docNode = docRoot(doc), doc
			p.doc = &d
			r := refOf(d.Object)
			switch g := groupOf(r.APIVersion); {
			case g == "apiextensions.k8s.io" && r.Kind == "CustomResourceDefinition":
				s.crds[scalar(d.Object, "spec", "group")+"/"+scalar(d.Object, "spec", "names", "kind")] = convert.CRDDigest(d.Object)
				if known, served := s.served(r.APIVersion, r.Kind); s.o.SkipServed && !s.o.KeepObjects && known && served {
					p.doc = nil // nothing converts it: its schemas, most of a repository's bytes, can go
				}
			case indexed(r.APIVersion, r.Kind):
				var m map[string]any
				if d.Object.Decode(&m) == nil {
					objs = append(objs, &unstructured.Unstructured{Object: m})
					found = append(found, gitopsObject{file: fs[i].Path, doc: p.doc})
				}
			}
		}
	}
	s.describeSources(gitops.FromManifests(objs).Charts, found)
}

// groups are the API groups of the custom resources among the files.
type groups map[string]bool

// customGroups lists the groups of objects the knowledge base does not describe: only their
// CRDs are parsed, since a repository renders its CRDs for every environment, and their
// schemas are most of its bytes.
func (s *scanner) customGroups(fs []File) groups {
	out := groups{}
	for i := range fs {
		for _, p := range fs[i].pieces {
			h := p.src.head
			if !h.ok {
				out[""] = true // unknown: parse every CRD
				continue
			}
			if known, _ := s.served(h.apiVersion, h.kind); !known && !indexed(h.apiVersion, h.kind) && groupOf(h.apiVersion) != "" {
				out[groupOf(h.apiVersion)] = true
			}
		}
	}
	return out
}

// mentioned says whether a CRD's text may define one of the groups.
func (g groups) mentioned(text []byte) bool {
	if g[""] {
		return true
	}
	for group := range g {
		if strings.Contains(string(text), group) {
			return true
		}
	}
	return false
}

func containsTemplate(text []byte) bool { return strings.Contains(string(text), "{{") }

// indexed says whether index reads documents of this API.
func indexed(apiVersion, kind string) bool {
	switch groupOf(apiVersion) + "/" + kind {
	case "apiextensions.k8s.io/CustomResourceDefinition", "argoproj.io/Application",
		"helm.toolkit.fluxcd.io/HelmRelease", "source.toolkit.fluxcd.io/OCIRepository",
		"kustomize.toolkit.fluxcd.io/Kustomization":
		return true
	}
	return false
}

// describeSources says, for each GitOps object among the files, where it is and what a
// person changes in it: the chart and version gitops reads, and where its values are.
func (s *scanner) describeSources(charts []inventory.GitopsChart, found []gitopsObject) {
	chartOf := map[string]inventory.GitopsChart{}
	for _, c := range charts {
		chartOf[c.Tool+"/"+c.Namespace+"/"+c.Name] = c
	}
	for _, g := range found {
		r := refOf(g.doc.Object)
		var key, tool string
		switch r.Kind {
		case "Application":
			key, tool = "argocd/"+r.Name, inventory.ToolArgoCD
		case "HelmRelease":
			key, tool = "helm/"+nsOr(r.Namespace)+"/"+r.Name, inventory.ToolFlux
		case "Kustomization":
			key = "kustomize/" + nsOr(r.Namespace) + "/" + r.Name
		default:
			continue
		}
		desc := fmt.Sprintf("%s at %s:%d", r.Kind, g.file, g.doc.Line)
		if c, ok := chartOf[tool+"/"+r.Namespace+"/"+r.Name]; ok {
			desc += fmt.Sprintf("; chart %s %s", c.Chart, c.Version)
			if c.RepoURL != "" {
				desc += " from " + c.RepoURL
			}
		}
		if v := valuesOf(g.doc.Object); v != "" {
			desc += fmt.Sprintf("; values: %s:%s", g.file, v)
		}
		if path := scalar(g.doc.Object, "spec", "path"); r.Kind == "Kustomization" && path != "" {
			desc += "; path " + path
		}
		s.sources[key] = desc
	}
}

func nsOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// valuesOf is where an Application's or HelmRelease's values are ("14 (spec.values)").
func valuesOf(obj *yaml.Node) string {
	for _, path := range [][]string{
		{"spec", "values"}, {"spec", "valuesFrom"},
		{"spec", "source", "helm", "valueFiles"}, {"spec", "source", "helm", "values"},
		{"spec", "source", "helm", "valuesObject"}, {"spec", "sources"},
	} {
		if v := get(obj, path...); v != nil {
			return fmt.Sprintf("%d (%s)", v.Line, strings.Join(path, "."))
		}
	}
	return ""
}

// gitopsSource names the Argo CD Application or Flux object whose tracking metadata obj
// carries, and why the object is left to a person: editing rendered output would be undone
// by the next sync.
func (s *scanner) gitopsSource(obj *yaml.Node) (name, why string) {
	ann, labels := get(obj, "metadata", "annotations"), get(obj, "metadata", "labels")
	var key string
	switch {
	case scalar(ann, "argocd.argoproj.io/tracking-id") != "":
		app, _, _ := strings.Cut(scalar(ann, "argocd.argoproj.io/tracking-id"), ":")
		name, key = "Argo CD Application "+app, "argocd/"+app
	case scalar(labels, "argocd.argoproj.io/instance") != "":
		app := scalar(labels, "argocd.argoproj.io/instance")
		name, key = "Argo CD Application "+app, "argocd/"+app
	case scalar(labels, "helm.toolkit.fluxcd.io/name") != "":
		ref := nsOr(scalar(labels, "helm.toolkit.fluxcd.io/namespace")) + "/" + scalar(labels, "helm.toolkit.fluxcd.io/name")
		name, key = "Flux HelmRelease "+ref, "helm/"+ref
	case scalar(labels, "kustomize.toolkit.fluxcd.io/name") != "":
		ref := nsOr(scalar(labels, "kustomize.toolkit.fluxcd.io/namespace")) + "/" + scalar(labels, "kustomize.toolkit.fluxcd.io/name")
		name, key = "Flux Kustomization "+ref, "kustomize/"+ref
	default:
		return "", ""
	}
	where := "it is not among the files"
	if d, ok := s.sources[key]; ok {
		where = d
	}
	return name, fmt.Sprintf("produced by %s (%s): change its source, since an edit of the rendered output is undone by the next sync", name, where)
}
