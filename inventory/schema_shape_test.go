package inventory_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// schemaWalker reads schema.json generically, resolving $ref to $defs.
type schemaWalker struct{ defs map[string]any }

func newSchemaWalker(t *testing.T) (schemaWalker, map[string]any) {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(inventory.SchemaJSON(), &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	return schemaWalker{defs: defs}, root
}

func (w schemaWalker) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		return w.resolve(w.defs[strings.TrimPrefix(ref, "#/$defs/")])
	}
	return m
}

func (w schemaWalker) properties(s map[string]any) map[string]any {
	props, _ := s["properties"].(map[string]any)
	return props
}

// schemaKey names a declared property by its object node, so the same property reached
// through two $refs counts once.
type schemaKey struct {
	node uintptr
	name string
}

func nodeID(s map[string]any) uintptr { return reflect.ValueOf(s).Pointer() }

// declared lists every property declared anywhere under s.
func (w schemaWalker) declared(s map[string]any, seen map[uintptr]bool, out map[schemaKey]bool) {
	if s == nil || seen[nodeID(s)] {
		return
	}
	seen[nodeID(s)] = true
	for name, p := range w.properties(s) {
		out[schemaKey{nodeID(s), name}] = true
		w.declared(w.resolve(p), seen, out)
	}
	for _, k := range []string{"items", "additionalProperties"} {
		w.declared(w.resolve(s[k]), seen, out)
	}
}

// used marks every declared property v sets, walking v with s.
func (w schemaWalker) used(s map[string]any, v any, out map[schemaKey]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if p, ok := w.properties(s)[k]; ok {
				out[schemaKey{nodeID(s), k}] = true
				w.used(w.resolve(p), e, out)
			} else {
				w.used(w.resolve(s["additionalProperties"]), e, out)
			}
		}
	case []any:
		for _, e := range v {
			w.used(w.resolve(s["items"]), e, out)
		}
	}
}

// The generated mutations reach every schema node only if the full document sets every
// property the schema declares.
func TestTheFullDocumentSetsEverySchemaProperty(t *testing.T) {
	w, root := newSchemaWalker(t)
	declared := map[schemaKey]bool{}
	w.declared(root, map[uintptr]bool{}, declared)
	data, err := json.Marshal(inventory.FullDocument())
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	used := map[schemaKey]bool{}
	w.used(root, doc, used)
	for k := range declared {
		if !used[k] {
			t.Errorf("the full document never sets property %q", k.name)
		}
	}
}

// json/v2 matches names exactly and encoding/json also case-insensitively; they decode an
// accepted document alike only because every object the schema lets into a struct is
// closed to all but the exact names of its fields, and every time.Time has a format.
func TestEverySchemaPropertyNamesAGoFieldExactly(t *testing.T) {
	w, root := newSchemaWalker(t)
	w.checkFields(t, "", root, reflect.TypeFor[inventory.Document]())
}

func (w schemaWalker) checkFields(t *testing.T, ptr string, s map[string]any, typ reflect.Type) {
	t.Helper()
	switch typ.Kind() {
	case reflect.Pointer:
		w.checkFields(t, ptr, s, typ.Elem())
	case reflect.Slice:
		w.checkFields(t, ptr+"/*", w.resolve(s["items"]), typ.Elem())
	case reflect.Map:
		w.checkFields(t, ptr+"/*", w.resolve(s["additionalProperties"]), typ.Elem())
	case reflect.Struct:
		if typ == reflect.TypeFor[time.Time]() {
			// The acceptor leaves an escaped string with a format to the slow path, since
			// encoding/json gives a time.Time its bytes still escaped; that holds only if
			// every time.Time is a formatted string.
			if s["format"] == nil {
				t.Errorf("%s: a time.Time whose schema has no format", ptr)
			}
			// decodeV1 names /collectedAt when a timestamp fails to decode.
			if ptr != "/collectedAt" {
				t.Errorf("%s: a time.Time other than /collectedAt", ptr)
			}
			return
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: the schema leaves %s open to other names", ptr, typ)
		}
		fields := map[string]reflect.Type{}
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = f.Type
		}
		for name, p := range w.properties(s) {
			ft, ok := fields[name]
			if !ok {
				t.Errorf("%s/%s: no field of %s is named so exactly", ptr, name, typ)
				continue
			}
			w.checkFields(t, ptr+"/"+name, w.resolve(p), ft)
		}
	}
}
