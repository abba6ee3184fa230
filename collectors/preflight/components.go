package preflight

import (
	"cmp"
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// Component sources (inventory.Component.Source).
const (
	sourceStaticPod  = "static-pod"
	sourceDaemonSet  = "daemonset"
	sourceConfigMap  = "configmap"
	sourceConfigFile = "config-file"
)

// components are the binaries whose flags are read from the pods that run them.
var components = map[string]bool{
	"kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true, "kube-proxy": true,
}

// hyperkubeNames are the names hyperkube (one binary for every component, until 1.19) took
// its component by, beside the components' own.
var hyperkubeNames = map[string]string{
	"apiserver": "kube-apiserver", "controller-manager": "kube-controller-manager",
	"scheduler": "kube-scheduler", "proxy": "kube-proxy",
}

func componentOrder(a, b inventory.Component) int {
	return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Source, b.Source), refOrder(a.Object, b.Object))
}

// podComponents records the control-plane components and kube-proxy a Pod of kube-system (or
// a static pod manifest, which may not name its namespace) runs. A container is a component
// when its command runs the component's binary (command[0]'s base name, or hyperkube's
// subcommand), or, without a command, when it is named after the component and the pod's
// component label (kubeadm's) or k8s-app label (kube-proxy's) says so; its flags are the rest
// of the command and its args. A Pod a DaemonSet runs is left to its DaemonSet.
func (r *Recorder) podComponents(obj map[string]any, ref inventory.ObjectRef, src source) {
	if ref.Namespace != "" && ref.Namespace != "kube-system" {
		return
	}
	if c := controllerOf(obj); c != nil && str(c, "kind") == "DaemonSet" {
		return
	}
	var nodes []string
	if n := str(obj, "spec", "nodeName"); n != "" {
		nodes = []string{inventory.BoundString(n)}
	}
	r.containerComponents(obj, ref, src, nil, sourceStaticPod, nodes)
}

// daemonSetComponents records kube-proxy (or a self-hosted control-plane component) as the
// pod template of its DaemonSet in kube-system configures it.
func (r *Recorder) daemonSetComponents(obj map[string]any, ref inventory.ObjectRef, src source) {
	if ref.Namespace != "" && ref.Namespace != "kube-system" {
		return
	}
	r.containerComponents(obj, ref, src, []string{"spec", "template"}, sourceDaemonSet, nil)
}

// containerComponents records each container of the pod template at template (the object
// itself for a Pod) that runs a component.
func (r *Recorder) containerComponents(obj map[string]any, ref inventory.ObjectRef, src source, template []string, from string, nodes []string) {
	podLabels := stringMap(at(obj, slices.Concat(template, []string{"metadata", "labels"})...))
	var loc *located
	for i, c := range listAt(obj, slices.Concat(template, []string{"spec", "containers"})...) {
		name, argv := componentOf(mapAt(c), podLabels)
		if name == "" {
			continue
		}
		if loc == nil {
			loc = src.object()
		}
		lineOf := func(a arg) int {
			p := make([]any, 0, len(template)+5)
			for _, t := range template {
				p = append(p, t)
			}
			return loc.line(append(p, "spec", "containers", i, a.field, a.index)...)
		}
		comp := inventory.Component{Component: name, Source: from, Object: ref, Nodes: nodes}
		comp.Flags, comp.FeatureGates = flags(argv, lineOf)
		if name == "kube-proxy" {
			for _, f := range comp.Flags {
				if f.Name == "proxy-mode" {
					comp.ProxyMode = f.Value
				}
			}
		}
		r.addComponent(comp)
	}
}

// arg is one command-line word and where it is written: command or args, at index.
type arg struct {
	value string
	field string
	index int
}

// componentOf answers which component a container runs and the words after its binary.
func componentOf(c map[string]any, podLabels map[string]string) (string, []arg) {
	command, args := words(c, "command"), words(c, "args")
	if len(command) > 0 {
		base := path.Base(command[0].value)
		if components[base] {
			return base, slices.Concat(command[1:], args)
		}
		if base == "hyperkube" && len(command) > 1 {
			sub := command[1].value
			if components[sub] {
				return sub, slices.Concat(command[2:], args)
			}
			if name := hyperkubeNames[sub]; name != "" {
				return name, slices.Concat(command[2:], args)
			}
		}
		return "", nil
	}
	name := str(c, "name")
	if components[name] && (podLabels["component"] == name || podLabels["k8s-app"] == name) {
		return name, args
	}
	return "", nil
}

// words are the strings of a container's command or args, with their indices.
func words(c map[string]any, field string) []arg {
	var out []arg
	for i, w := range listAt(c, field) {
		if s, ok := w.(string); ok {
			out = append(out, arg{value: s, field: field, index: i})
		}
	}
	return out
}

// flags reads command-line words as pflag does for the components: "--name=value",
// "--name value" (the next word, when it is no flag) and "--name" alone; a single dash
// too ("-v=2"); "--" ends the flags, and other words are skipped. --feature-gates is also
// split into gates as component-base's featuregate.Set splits it (A=true,B=false, each
// trimmed and read by strconv.ParseBool; a gate without a boolean value is left out, as the
// component refuses it:
// https://github.com/kubernetes/component-base/blob/v0.37.2/featuregate/feature_gate.go).
// lineOf gives a word's line. Only the values of valueFlags are kept.
func flags(argv []arg, lineOf func(arg) int) ([]inventory.Flag, []inventory.FeatureGate) {
	var out []inventory.Flag
	gates := map[string]inventory.FeatureGate{}
	for i := 0; i < len(argv); i++ {
		w := argv[i].value
		if w == "--" {
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if name == "" {
			continue
		}
		at := argv[i]
		valueAt := at
		if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1].value, "-") {
			i++
			value, valueAt = argv[i].value, argv[i]
		}
		if name == "feature-gates" {
			line := lineOf(valueAt)
			for _, g := range splitGates(value) {
				g.Line = line
				gates[g.Name] = g
			}
		}
		out = append(out, inventory.Flag{Name: inventory.BoundString(name), Value: flagValue(name, value), Line: lineOf(at)})
	}
	return out, sortedGates(gates)
}

// splitGates splits a --feature-gates value as featuregate.Set does.
func splitGates(value string) []inventory.FeatureGate {
	var out []inventory.FeatureGate
	for _, s := range strings.Split(value, ",") {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if name := strings.TrimSpace(k); err == nil && name != "" {
			out = append(out, inventory.FeatureGate{Name: inventory.BoundString(name), Value: b})
		}
	}
	return out
}

func sortedGates(gates map[string]inventory.FeatureGate) []inventory.FeatureGate {
	if len(gates) == 0 {
		return nil
	}
	out := make([]inventory.FeatureGate, 0, len(gates))
	for _, g := range gates {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b inventory.FeatureGate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// valueFlags are the flags whose values are recorded; of every other flag only the name is,
// since a value may be a secret however the flag is named (a token, a URL with a password,
// an etcd endpoint with credentials). These are what the rules or a reader of the inventory
// judge an upgrade by: verbosity (v), kube-proxy's proxy-mode, the kubelet's cgroup-driver,
// container-runtime and container-runtime-endpoint (the runtime it talks to), the in-tree
// cloud-provider (removed in 1.31), the API server's runtime-config (the API versions it
// serves), its admission plugins (enable-admission-plugins, disable-admission-plugins and the
// older admission-control) and authorization-mode. Feature gates are recorded parsed
// (FeatureGates), not as the flag's value.
var valueFlags = map[string]bool{
	"v": true, "proxy-mode": true, "cgroup-driver": true, "container-runtime": true, "container-runtime-endpoint": true,
	"cloud-provider": true, "runtime-config": true, "enable-admission-plugins": true, "disable-admission-plugins": true,
	"admission-control": true, "authorization-mode": true,
}

// flagValue is the value recorded of a flag: its value for one of valueFlags, unless it is a
// URL with a user in it (https://user:password@host); empty otherwise.
func flagValue(name, value string) string {
	if !valueFlags[name] {
		return ""
	}
	if scheme := strings.Index(value, "://"); scheme >= 0 {
		host := value[scheme+3:]
		if end := strings.IndexAny(host, "/?#"); end >= 0 {
			host = host[:end]
		}
		if strings.Contains(host, "@") {
			return ""
		}
	}
	return inventory.BoundString(value)
}

// addComponent adds a component, or the nodes of one configured the same way already seen
// (live, one entry per component and configuration rather than per pod).
func (r *Recorder) addComponent(c inventory.Component) {
	var cut int
	c.Flags, c.FeatureGates, cut = boundSettings(c.Flags, c.FeatureGates)
	c.Omitted += cut
	key := componentKey(c)
	if i, ok := r.componentAt[key]; ok {
		seen := &r.components[i]
		seen.Nodes = append(seen.Nodes, c.Nodes...)
		if refOrder(c.Object, seen.Object) < 0 {
			seen.Object = c.Object
		}
		return
	}
	if r.componentAt == nil {
		r.componentAt = map[string]int{}
	}
	r.componentAt[key] = len(r.components)
	r.components = append(r.components, c)
}

// componentKey is what makes two components configured the same: everything but the object
// they were read from and their nodes.
func componentKey(c inventory.Component) string {
	c.Object = inventory.ObjectRef{Kind: c.Object.Kind, File: c.Object.File}
	c.Nodes = nil
	key, _ := json.Marshal(c)
	return string(key)
}

// boundSettings cuts flags and gates to inventory.MaxComponentSettings each, counting the rest.
func boundSettings(fs []inventory.Flag, gs []inventory.FeatureGate) ([]inventory.Flag, []inventory.FeatureGate, int) {
	omitted := 0
	if n := len(fs); n > inventory.MaxComponentSettings {
		omitted += n - inventory.MaxComponentSettings
		fs = fs[:inventory.MaxComponentSettings]
	}
	if n := len(gs); n > inventory.MaxComponentSettings {
		omitted += n - inventory.MaxComponentSettings
		gs = gs[:inventory.MaxComponentSettings]
	}
	return fs, gs, omitted
}

// componentSection answers the components in order, their nodes sorted, each list within
// its bound.
func (r *Recorder) componentSection() ([]inventory.Component, int) {
	if len(r.components) == 0 {
		return nil, 0
	}
	out := slices.Clone(r.components)
	slices.SortStableFunc(out, componentOrder)
	omitted := 0
	if len(out) > inventory.MaxPreflightItems {
		omitted = len(out) - inventory.MaxPreflightItems
		out = out[:inventory.MaxPreflightItems]
	}
	for i := range out {
		out[i].Nodes, out[i].NodesOmitted = names(out[i].Nodes)
		if len(out[i].Nodes) == 0 {
			out[i].Nodes = nil
		}
	}
	return out, omitted
}
