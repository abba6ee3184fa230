package preflight

import (
	"encoding/json"
	"math"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/upgradescope/upgradescope/inventory"
)

// Readers of unstructured values: what encoding/json, the unstructured converter and the
// files collector's YAML reader decode to (maps with string keys, lists, strings, int,
// int64 or float64 numbers, json.Number, booleans, nil). A value of another type than the
// field's reads as absent, never as a panic: a hostile manifest may hold anything.

// at walks maps along path and answers the value there, nil when absent.
func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// mapAt is the map at path, nil when absent or not a map.
func mapAt(v any, path ...string) map[string]any {
	m, _ := at(v, path...).(map[string]any)
	return m
}

// listAt is the list at path, nil when absent or not a list.
func listAt(v any, path ...string) []any {
	l, _ := at(v, path...).([]any)
	return l
}

// str is the string at path, "" when absent or not a string.
func str(v any, path ...string) string {
	s, _ := at(v, path...).(string)
	return s
}

// strs are the strings of the list at path; items that are no strings are skipped.
func strs(v any, path ...string) []string {
	var out []string
	for _, it := range listAt(v, path...) {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// integer reads an integral number.
func integer(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return clampInt(n), true
	case int32:
		return int(n), true
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return clampInt(int64(max(min(n, math.MaxInt32), math.MinInt32))), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return clampInt(i), true
		}
	}
	return 0, false
}

func clampInt(n int64) int {
	return int(max(min(n, math.MaxInt32), math.MinInt32))
}

// count reads a non-negative integer field (replicas, a port, seconds), def when absent or
// not an integer, 0 when negative: the schema's minimum.
func count(v any, def int) int {
	if v == nil {
		return def
	}
	n, ok := integer(v)
	if !ok {
		return def
	}
	return max(n, 0)
}

// intOrString reads an IntOrString field as written: "2" or "50%", "" when absent.
func intOrString(v any) string {
	if s, ok := v.(string); ok {
		return inventory.BoundString(s)
	}
	if n, ok := integer(v); ok {
		return strconv.Itoa(n)
	}
	return ""
}

// stringMap reads a map of strings (labels, annotations); values of other types are left
// out, as the API server would refuse them.
func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		if s, ok := val.(string); ok {
			out[k] = s
		}
	}
	return out
}

// labelSelector reads a metav1.LabelSelector; ok is false when v is neither absent nor a
// well-formed selector.
func labelSelector(v any) (_ *metav1.LabelSelector, ok bool) {
	if v == nil {
		return nil, true
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, false
	}
	sel := &metav1.LabelSelector{}
	if ml := m["matchLabels"]; ml != nil {
		raw, isMap := ml.(map[string]any)
		if !isMap {
			return nil, false
		}
		sel.MatchLabels = make(map[string]string, len(raw))
		for k, val := range raw {
			s, isString := val.(string)
			if !isString {
				return nil, false
			}
			sel.MatchLabels[k] = s
		}
	}
	if me := m["matchExpressions"]; me != nil {
		raw, isList := me.([]any)
		if !isList {
			return nil, false
		}
		for _, e := range raw {
			req, ok := requirement(e)
			if !ok {
				return nil, false
			}
			sel.MatchExpressions = append(sel.MatchExpressions, req)
		}
	}
	return sel, true
}

func requirement(v any) (metav1.LabelSelectorRequirement, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return metav1.LabelSelectorRequirement{}, false
	}
	key, keyOK := m["key"].(string)
	op, opOK := m["operator"].(string)
	if !keyOK || !opOK {
		return metav1.LabelSelectorRequirement{}, false
	}
	req := metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOperator(op)}
	if vs := m["values"]; vs != nil {
		list, ok := vs.([]any)
		if !ok {
			return metav1.LabelSelectorRequirement{}, false
		}
		for _, it := range list {
			s, ok := it.(string)
			if !ok {
				return metav1.LabelSelectorRequirement{}, false
			}
			req.Values = append(req.Values, s)
		}
	}
	return req, true
}

// selectorOf is the selector v describes, with apimachinery's semantics
// (metav1.LabelSelectorAsSelector): absent selects nothing, empty everything. A malformed
// selector, which the API server refuses, selects nothing.
func selectorOf(v any) labels.Selector {
	sel, ok := labelSelector(v)
	if !ok {
		return labels.Nothing()
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

// emptySelector says whether v is a selector given with nothing in it.
func emptySelector(v any) bool {
	sel, ok := labelSelector(v)
	return ok && sel != nil && len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0
}

// serviceRef reads a webhook client configuration's service, with the API's default port.
func serviceRef(v any) *inventory.ServiceRef {
	svc := mapAt(v)
	if svc == nil {
		return nil
	}
	return &inventory.ServiceRef{
		Namespace: inventory.BoundString(str(svc, "namespace")),
		Name:      inventory.BoundString(str(svc, "name")),
		Port:      count(svc["port"], 443),
	}
}
