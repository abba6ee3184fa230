package gitops

import (
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/inventory"
)

// MaxInlineValuesBytes bounds an Argo CD source's helm.values string before it is decoded.
const MaxInlineValuesBytes = 1 << 20

// ChartValues are the values a GitOps object declares for its chart, for the chart advisor
// to render with. They can hold secrets: they are kept beside the inventory, never in it,
// and never logged or reported.
type ChartValues struct {
	Values map[string]any
	// ReleaseName is the release name the chart renders with; ReleaseNamespace is where
	// Helm stores the release (Flux's storageNamespace; for Argo CD, which leaves no
	// release, its destination).
	ReleaseName, ReleaseNamespace string
	// NotRead names the parts of the declared values that could not be read ("valuesFrom",
	// "valueFiles", "helm.values (not a YAML map)"): the chart is judged without them.
	NotRead []string
	// HelmRepository is the "namespace/name" of the Flux HelmRepository a HelmRelease's
	// chart comes from; RepoURL its URL once read (ResolveHelmRepositories, or the same
	// files), with only scheme, host, port and path.
	HelmRepository, RepoURL string
	// auth is what the HelmRepository names to authenticate with, noted by
	// ResolveHelmRepositories for ReadCredentials.
	auth fluxAuth
}

// ValuesKey is how Result.Values names the values of one Application or HelmRelease.
func ValuesKey(tool, namespace, name string) string { return tool + "/" + namespace + "/" + name }

// applicationValues reads the values an Application's chart source declares, as Argo CD
// applies them: helm.valuesObject, else helm.values (YAML), then helm.parameters on top as
// --set (--set-string where forceString). valueFiles live beside the chart and are not read.
func applicationValues(app *unstructured.Unstructured, src map[string]any) ChartValues {
	target, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace")
	out := ChartValues{ReleaseName: app.GetName(), ReleaseNamespace: target, Values: map[string]any{}}
	helm, _ := src["helm"].(map[string]any)
	if helm == nil {
		return out
	}
	if name := strings.TrimSpace(stringField(helm, "releaseName")); name != "" {
		out.ReleaseName = name
	}
	if obj, ok := helm["valuesObject"].(map[string]any); ok {
		out.Values = runtime.DeepCopyJSON(obj)
	} else if text := stringField(helm, "values"); text != "" {
		v, err := inlineValues(text)
		if err != nil {
			out.NotRead = append(out.NotRead, err.Error())
		} else {
			out.Values = v
		}
	}
	if files, _ := helm["valueFiles"].([]any); len(files) > 0 {
		out.NotRead = append(out.NotRead, "valueFiles")
	}
	params, _ := helm["parameters"].([]any)
	bad := 0
	for _, p := range params {
		if !applyParameter(out.Values, p) {
			bad++
		}
	}
	if bad > 0 {
		out.NotRead = append(out.NotRead, fmt.Sprintf("%d helm.parameters", bad))
	}
	return out
}

// inlineValues decodes helm.values; the error never quotes it (it may hold secrets).
func inlineValues(text string) (map[string]any, error) {
	if len(text) > MaxInlineValuesBytes {
		return nil, fmt.Errorf("helm.values larger than %d MiB", MaxInlineValuesBytes>>20)
	}
	var v map[string]any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("helm.values (not a YAML map)")
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

// applyParameter sets one {name, value, forceString} parameter as helm --set would.
func applyParameter(values map[string]any, p any) bool {
	m, ok := p.(map[string]any)
	name := strings.TrimSpace(stringField(m, "name"))
	if !ok || name == "" {
		return false
	}
	// Argo CD escapes commas so that a value is one value, not a list of assignments.
	set := name + "=" + strings.ReplaceAll(stringField(m, "value"), ",", `\,`)
	if force, _ := m["forceString"].(bool); force {
		return strvals.ParseIntoString(set, values) == nil
	}
	return strvals.ParseInto(set, values) == nil
}

// helmReleaseValues reads a HelmRelease's spec.values and the release name and storage
// namespace helm-controller gives it. valuesFrom (ConfigMaps and Secrets) and the chart's
// valuesFiles are not read.
func helmReleaseValues(hr *unstructured.Unstructured) ChartValues {
	out := ChartValues{Values: map[string]any{}, ReleaseName: fluxReleaseName(hr), ReleaseNamespace: hr.GetNamespace()}
	if ns, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace"); ns != "" {
		out.ReleaseNamespace = ns
	}
	if v, ok, _ := unstructured.NestedMap(hr.Object, "spec", "values"); ok && v != nil {
		out.Values = v // NestedMap deep-copies
	}
	if from, _, _ := unstructured.NestedSlice(hr.Object, "spec", "valuesFrom"); len(from) > 0 {
		out.NotRead = append(out.NotRead, "valuesFrom")
	}
	// The chart's valuesFiles replace its values.yaml; they live in the chart source.
	if files, _, _ := unstructured.NestedSlice(hr.Object, "spec", "chart", "spec", "valuesFiles"); len(files) > 0 {
		out.NotRead = append(out.NotRead, "valuesFiles")
	}
	ref, _, _ := unstructured.NestedStringMap(hr.Object, "spec", "chart", "spec", "sourceRef")
	if ref["kind"] == "HelmRepository" && ref["name"] != "" {
		ns := ref["namespace"]
		if ns == "" {
			ns = hr.GetNamespace()
		}
		out.HelmRepository = ns + "/" + ref["name"]
	}
	return out
}

// fluxReleaseName is helm-controller's: spec.releaseName, else [targetNamespace-]name.
// (Names past 53 characters, which it shortens with a hash, are left as they are.)
func fluxReleaseName(hr *unstructured.Unstructured) string {
	if name, _, _ := unstructured.NestedString(hr.Object, "spec", "releaseName"); name != "" {
		return name
	}
	if target, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace"); target != "" {
		return target + "-" + hr.GetName()
	}
	return hr.GetName()
}

// keepValues records v for c's object in res, the first chart of an object winning.
func (res *Result) keepValues(c inventory.GitopsChart, v ChartValues) {
	if res.Values == nil {
		res.Values = map[string]ChartValues{}
	}
	key := ValuesKey(c.Tool, c.Namespace, c.Name)
	if _, ok := res.Values[key]; !ok {
		res.Values[key] = v
	}
}
