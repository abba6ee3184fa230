package preflight

import (
	"cmp"
	"slices"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/inventory"
)

// Configuration documents: a KubeletConfiguration (kubelet.config.k8s.io) or a
// KubeProxyConfiguration (kubeproxy.config.k8s.io) written as a document of its own, and the
// KubeProxyConfiguration kubeadm keeps in the kube-proxy ConfigMap of kube-system (its
// config.conf key).

// configFile records a configuration document: its feature gates and, for kube-proxy, its
// mode, for the kubelet, failCgroupV1.
func (r *Recorder) configFile(obj map[string]any, ref inventory.ObjectRef, component string, src source) {
	loc := src.object()
	r.addComponent(configured(obj, component, sourceConfigFile, ref, loc.keyLine))
}

// kubeProxyConfigMap records the KubeProxyConfiguration in kube-proxy's ConfigMap: every data
// value that decodes to one, as kube-proxy's --config reads it (sigs.k8s.io/yaml).
func (r *Recorder) kubeProxyConfigMap(obj map[string]any, ref inventory.ObjectRef, src source) {
	if ref.Name != KubeProxyConfigMap || ref.Namespace != "" && ref.Namespace != "kube-system" {
		return
	}
	data := mapAt(obj, "data")
	var loc *located
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range data {
			if !yield(k) {
				return
			}
		}
	}) {
		text, ok := data[key].(string)
		if !ok {
			continue
		}
		var cfg map[string]any
		if sigsyaml.Unmarshal([]byte(text), &cfg) != nil || str(cfg, "kind") != "KubeProxyConfiguration" {
			continue
		}
		if loc == nil {
			loc = src.object()
		}
		r.addComponent(configured(cfg, "kube-proxy", sourceConfigMap, ref, embeddedLines(loc, key)))
	}
}

// configured reads a configuration's settings; keyLine gives the line of the key at a path.
func configured(cfg map[string]any, component, from string, ref inventory.ObjectRef, keyLine func(path ...any) int) inventory.Component {
	c := inventory.Component{Component: component, Source: from, Object: ref}
	for name, v := range mapAt(cfg, "featureGates") {
		if b, ok := v.(bool); ok {
			c.FeatureGates = append(c.FeatureGates, inventory.FeatureGate{
				Name: inventory.BoundString(name), Value: b, Line: keyLine("featureGates", name),
			})
		}
	}
	slices.SortFunc(c.FeatureGates, func(a, b inventory.FeatureGate) int { return cmp.Compare(a.Name, b.Name) })
	switch component {
	case "kube-proxy":
		c.ProxyMode = inventory.BoundString(str(cfg, "mode"))
	case "kubelet":
		if b, ok := cfg["failCgroupV1"].(bool); ok {
			c.FailCgroupV1 = &b
		}
	}
	return c
}

// embeddedLines gives the lines of keys in the configuration a ConfigMap holds at data[key]:
// a literal block scalar (config.conf: |) keeps its lines, so a key on its Nth line is on
// the scalar's line plus N; any other style gives every key the data key's line.
func embeddedLines(loc *located, key string) func(path ...any) int {
	value := resolve(loc.at("data", key))
	dataLine := loc.keyLine("data", key)
	if value == nil || value.Kind != yaml.ScalarNode || value.Style&yaml.LiteralStyle == 0 {
		return func(...any) int { return dataLine }
	}
	var root yaml.Node
	if yaml.Unmarshal([]byte(value.Value), &root) != nil {
		return func(...any) int { return dataLine }
	}
	inner := &located{node: resolve(&root), offset: value.Line + loc.offset}
	return func(path ...any) int {
		if line := inner.keyLine(path...); line > 0 {
			return line
		}
		return dataLine
	}
}

// sourceConfigz is a kubelet's configuration read live from its configz endpoint.
const sourceConfigz = "kubelet-configz"

// ObserveKubeletConfigz records a kubelet's running configuration as its configz endpoint
// answers it (the "kubeletconfig" object, through the API server's node proxy), for the node
// named by ref (Kind Node). Kubelets configured the same way are one component naming their
// nodes.
func (r *Recorder) ObserveKubeletConfigz(cfg map[string]any, ref inventory.ObjectRef) {
	ref = boundRef(ref)
	c := configured(cfg, "kubelet", sourceConfigz, ref, func(...any) int { return 0 })
	if ref.Name != "" {
		c.Nodes = []string{ref.Name}
	}
	r.addComponent(c)
}
