package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// More helpers on nodes, for the steps of the less common groups (flowcontrol, admission
// webhooks, certificates, CRDs).

// seq builds a block sequence of items.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// strs builds a sequence of strings.
func strs(values ...string) *yaml.Node {
	s := seq()
	for _, v := range values {
		s.Content = append(s.Content, str(v))
	}
	return s
}

// isNull says whether n is absent or an explicit null ("field:", "field: null", "field: ~").
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// isIntValue says whether n is the integer want (written as a number, not a string).
func isIntValue(n *yaml.Node, want int64) bool {
	return isInt(n) && n.Value == fmt.Sprint(want)
}

// ensureMap is the mapping at key in m, created (after the key named after) when absent or
// null; nil when key holds something else, which a step reports rather than overwrites.
func ensureMap(m *yaml.Node, after, key string) *yaml.Node {
	v := get(m, key)
	if isNull(v) {
		v = mapping()
		setAfter(m, after, key, v)
	}
	if v.Kind != yaml.MappingNode {
		return nil
	}
	return v
}

// pointer joins a JSON pointer from keys and indexes ("/spec/webhooks/0/failurePolicy").
func pointer(parts ...any) string {
	p := ""
	for _, part := range parts {
		p += fmt.Sprintf("/%v", part)
	}
	return p
}

// toValue decodes a node into plain Go values (maps, slices, strings, numbers) as a JSON
// reader would see them, for comparisons and for handing a subtree to Kubernetes' types.
func toValue(n *yaml.Node) (any, error) {
	if n == nil {
		return nil, fmt.Errorf("no value")
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// normalize turns a YAML decoding into its JSON shape: map keys as strings, integers as
// float64, so that two equal documents compare equal however they were written.
func normalize(v any) any {
	raw, err := json.Marshal(jsonable(v))
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return v
	}
	return out
}

// jsonable converts the map[any]any a YAML decoder may produce into map[string]any.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonable(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonable(e)
		}
		return t
	}
	return v
}

// escapePointer escapes a key for a JSON pointer ("~" as "~0", "/" as "~1").
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// firstWritten is the first of nodes that is written in the document (a line), for a remark
// about a field a step adds: the field's own line when it was there, else its parent's.
func firstWritten(nodes ...*yaml.Node) *yaml.Node {
	for _, n := range nodes {
		if n != nil && n.Line > 0 {
			return n
		}
	}
	return nil
}
