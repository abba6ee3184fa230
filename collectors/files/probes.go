package files

import (
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// listFields are fields Kubernetes objects hold lists in. A probe path stepping into every
// element of one of them names every key it needs after the wildcard, so the document may
// still be narrowed; a wildcard over anything else may be over a map, whose keys are
// anybody's (a label named "env"), and the document is parsed whole.
var listFields = set(
	"containers", "initContainers", "ephemeralContainers", "volumes", "tolerations", "env", "envFrom",
	"ports", "volumeMounts", "volumeDevices", "imagePullSecrets", "nodeSelectorTerms", "matchExpressions",
	"matchFields", "topologySpreadConstraints", "hostAliases", "args", "command", "readinessGates",
	"resourceClaims", "schedulingGates", "requiredDuringSchedulingIgnoredDuringExecution",
	"preferredDuringSchedulingIgnoredDuringExecution", "values", "ownerReferences", "finalizers",
	"volumeClaimTemplates", "taints", "versions", "rules", "paths", "tls", "hosts", "subjects",
)

// builtinGroups are the groups of the built-in kinds dropped names.
var builtinGroups = []string{"", "apps", "extensions", "batch", "apiextensions.k8s.io"}

// narrowing is, per kind, the keys narrow may drop with the loaded probes: dropped's, less
// every key a probe of the kind steps through. A kind a probe walks with a wildcard over
// something that may be a map is not narrowed at all. Documents are narrowed by kind alone,
// so a probe of a custom resource named like a built-in kind (example.com/Deployment) keeps
// what it reads too.
func narrowing(probes *probe.Set) map[string]map[string]bool {
	if probes.Len() == 0 {
		return dropped
	}
	probed := probes.Kinds()
	out := make(map[string]map[string]bool, len(dropped))
	for kind, drop := range dropped {
		groups := slices.Clone(builtinGroups)
		for _, k := range probed {
			if g, kk, _ := probe.SplitKind(k); kk == kind && !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
		keep, whole := map[string]bool{}, false
		for _, g := range groups {
			fields, wildcards := probes.Fields(g, kind)
			for f := range fields {
				keep[f] = true
			}
			for _, w := range wildcards {
				whole = whole || !listFields[w]
			}
		}
		if whole {
			continue
		}
		narrowed := map[string]bool{}
		for k := range drop {
			if !keep[k] {
				narrowed[k] = true
			}
		}
		out[kind] = narrowed
	}
	return out
}

// plain turns a YAML node into the values JSON decodes to (maps with string keys, lists,
// strings, numbers, booleans, nil), what probe paths walk, reading scalars as Kubernetes'
// decoder does (see scalar). Aliases are expanded and merge keys applied within
// MaxDocumentNodes nodes, so an alias bomb costs no more than the largest document read; past
// that, or at a key that is not a scalar, the node is left to the YAML library's decoder,
// which bounds expansion itself.
func plain(n *yaml.Node) any {
	budget := MaxDocumentNodes
	if v, ok := plainNode(n, &budget, 0); ok {
		return v
	}
	return decoded(n)
}

// plainNode is plain within budget nodes and maxAliasDepth aliases on any one path (an alias
// may name a node holding it); ok is false past either, or at what it does not read.
func plainNode(n *yaml.Node, budget *int, aliases int) (_ any, ok bool) {
	if *budget--; *budget < 0 {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		return plainMapping(n, budget, aliases)
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			if l[i], ok = plainNode(c, budget, aliases); !ok {
				return nil, false
			}
		}
		return l, true
	case yaml.ScalarNode:
		return scalar(n), true
	case yaml.AliasNode:
		if aliases == maxAliasDepth {
			return nil, false
		}
		return plainNode(n.Alias, budget, aliases+1)
	default:
		return nil, false
	}
}

// plainMapping reads a mapping: its own keys, the last occurrence winning, then the keys of
// the mappings a merge key (<<) names that it does not set itself, the first named winning.
func plainMapping(n *yaml.Node, budget *int, aliases int) (any, bool) {
	m := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, false
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		v, ok := plainNode(n.Content[i+1], budget, aliases)
		if !ok {
			return nil, false
		}
		m[k.Value] = v
	}
	for _, merge := range merges {
		sources := []*yaml.Node{merge}
		if r := resolve(merge, 0); r != nil && r.Kind == yaml.SequenceNode {
			sources = r.Content
		}
		for _, src := range sources {
			v, ok := plainNode(src, budget, aliases)
			from, isMap := v.(map[string]any)
			if !ok || !isMap {
				return nil, false
			}
			for k, v := range from {
				if _, set := m[k]; !set {
					m[k] = v
				}
			}
		}
	}
	return m, true
}

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans beyond true and false. The
// YAML library reads YAML 1.2, where they are strings; Kubernetes' decoder (sigs.k8s.io/yaml,
// which kubectl and Helm use) reads YAML 1.1, and a probe observes what the cluster would.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// scalar is a scalar's value as Kubernetes' decoder reads it (see yaml11Bools): YAML 1.1
// booleans, and integers in Go's syntax, so a leading 0 is octal.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!str":
		if b, ok := yaml11Bools[n.Value]; ok && n.Style == 0 {
			return b
		}
		return n.Value
	case "!!null":
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(n.Value)
		if err == nil {
			return b
		}
	case "!!int":
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err == nil {
			return i
		}
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err == nil {
			return f
		}
	}
	return decoded(n)
}

// decoded is what the YAML library decodes n to, with the keys of every map made strings.
func decoded(n *yaml.Node) any {
	var v any
	if n.Decode(&v) != nil {
		return nil
	}
	return stringKeys(v)
}

func stringKeys(v any) any {
	switch c := v.(type) {
	case map[string]any:
		for k, e := range c {
			c[k] = stringKeys(e)
		}
	case map[any]any:
		m := make(map[string]any, len(c))
		for k, e := range c {
			m[yamlKey(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range c {
			c[i] = stringKeys(e)
		}
	}
	return v
}

func yamlKey(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	b, err := yaml.Marshal(k)
	if err != nil || len(b) == 0 {
		return ""
	}
	return string(b[:len(b)-1])
}
