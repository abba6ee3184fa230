package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/inventory"
)

// toAST converts a Go value to the OPA value its JSON encoding would decode to, without the
// JSON round trip ast.InterfaceToValue makes for structs: on a 100k-object inventory that
// round trip cost more than evaluating every rule pack. It honours json tags (name,
// omitempty, "-") and encodes time.Time as RFC 3339; TestASTMatchesJSON holds it to
// encoding/json on every golden inventory.
func toAST(v any) (ast.Value, error) {
	c := converter{strings: map[string]*ast.Term{}}
	return c.valueOf(reflect.ValueOf(v))
}

// inventoryValue converts the inventory for input, leaving workloadImages and helmReleases
// to be converted only if a rule reads them: they hold every image and every release of the
// cluster, tens of thousands of images and thousands of releases on a large one, and the
// built-in rules read the few they judge from input.facts.images and
// input.facts.helmReleases instead. A custom pack that reads one pays its conversion
// (through JSON, as ast.LazyObject does) on first read.
func inventoryValue(inv *inventory.Document) (map[string]any, error) {
	c := converter{strings: map[string]*ast.Term{}}
	v := reflect.ValueOf(inv).Elem()
	native := map[string]any{}
	for _, f := range fieldsOf(v.Type()) {
		fv := v.Field(f.index)
		switch {
		case f.omitEmpty && isEmpty(fv):
		case f.name == "workloadImages" || f.name == "helmReleases" || f.name == "probes":
			native[f.name] = fv.Interface()
		default:
			value, err := c.valueOf(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			native[f.name] = value
		}
	}
	return native, nil
}

// converter interns string terms: an inventory repeats the same namespaces, kinds and
// versions thousands of times, and terms are immutable once built.
type converter struct {
	strings map[string]*ast.Term
}

func (c *converter) str(s string) *ast.Term {
	t, ok := c.strings[s]
	if !ok {
		t = ast.StringTerm(s)
		c.strings[s] = t
	}
	return t
}

var timeType = reflect.TypeFor[time.Time]()

func (c *converter) valueOf(v reflect.Value) (ast.Value, error) {
	if !v.IsValid() {
		return ast.Null{}, nil
	}
	if v.Type() == timeType {
		return ast.String(v.Interface().(time.Time).Format(time.RFC3339Nano)), nil
	}
	if value, ok := c.known(v); ok {
		return value, nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ast.Null{}, nil
		}
		return c.valueOf(v.Elem())
	case reflect.String:
		return c.str(v.String()).Value, nil
	case reflect.Bool:
		return ast.Boolean(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return ast.Number(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return ast.Number(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		return ast.InterfaceToValue(v.Float())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return ast.Null{}, nil
		}
		terms := make([]*ast.Term, v.Len())
		for i := range terms {
			t, err := c.term(v.Index(i))
			if err != nil {
				return nil, err
			}
			terms[i] = t
		}
		return ast.NewArray(terms...), nil
	case reflect.Map:
		return c.mapValue(v)
	case reflect.Struct:
		return c.structValue(v)
	}
	return nil, fmt.Errorf("cannot convert %s to an OPA value", v.Type())
}

// term is valueOf wrapped in a term, reusing interned string terms.
func (c *converter) term(v reflect.Value) (*ast.Term, error) {
	switch v.Kind() {
	case reflect.String:
		return c.str(v.String()), nil
	case reflect.Bool:
		return ast.InternedTerm(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// OPA keeps small integers interned; larger ones get a new term.
		return ast.InternedTerm(v.Int()), nil
	}
	e, err := c.valueOf(v)
	if err != nil {
		return nil, err
	}
	return ast.NewTerm(e), nil
}

func (c *converter) mapValue(v reflect.Value) (ast.Value, error) {
	if v.IsNil() {
		return ast.Null{}, nil
	}
	// Keys are read once and sorted as plain strings: sorting reflect.Values through String
	// was most of converting a row that counts 10,000 namespaces.
	type entry struct {
		key   string
		value reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		entries = append(entries, entry{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	items := make([][2]*ast.Term, len(entries))
	for i, e := range entries {
		t, err := c.term(e.value)
		if err != nil {
			return nil, err
		}
		items[i] = [2]*ast.Term{c.str(e.key), t}
	}
	return ast.NewObject(items...), nil
}

// known converts the types an inventory repeats most (API usage rows, in apiUsage, CRDs and
// every judged Helm release's manifest, their namespace counts and object references, Helm
// releases, namespaces)
// without reflection: walking their fields through reflect was half of building the input.
// TestASTMatchesJSON and TestKnownTypesConvertAsJSON hold them to the JSON encoding.
func (c *converter) known(v reflect.Value) (ast.Value, bool) {
	switch v.Kind() {
	case reflect.Map:
		if m, ok := v.Interface().(map[string]int); ok {
			return c.counts(m), true
		}
	case reflect.Struct:
		if !v.CanAddr() {
			return nil, false
		}
		switch p := v.Addr().Interface().(type) {
		case *inventory.APIUsage:
			return c.apiUsage(p), true
		case *inventory.ObjectRef:
			return c.objectRef(p), true
		case *inventory.HelmRelease:
			return c.helmRelease(p), true
		case *inventory.Namespace:
			return c.namespace(p), true
		}
	}
	return nil, false
}

func (c *converter) counts(m map[string]int) ast.Value {
	if m == nil {
		return ast.Null{}
	}
	items := make([][2]*ast.Term, 0, len(m))
	for k, n := range m {
		items = append(items, [2]*ast.Term{c.str(k), ast.InternedTerm(n)})
	}
	return ast.NewObject(items...)
}

func (c *converter) apiUsage(u *inventory.APIUsage) ast.Value {
	items := make([][2]*ast.Term, 0, 8)
	items = append(items,
		[2]*ast.Term{c.str("group"), c.str(u.Group)},
		[2]*ast.Term{c.str("version"), c.str(u.Version)},
		[2]*ast.Term{c.str("kind"), c.str(u.Kind)},
		[2]*ast.Term{c.str("count"), ast.InternedTerm(u.Count)},
		[2]*ast.Term{c.str("namespaces"), ast.NewTerm(c.counts(u.Namespaces))},
	)
	if u.NamespacesOmitted != 0 {
		items = append(items, [2]*ast.Term{c.str("namespacesOmitted"), ast.InternedTerm(u.NamespacesOmitted)})
	}
	if len(u.Objects) > 0 {
		objects := make([]*ast.Term, len(u.Objects))
		for i := range u.Objects {
			objects[i] = ast.NewTerm(c.objectRef(&u.Objects[i]))
		}
		items = append(items, [2]*ast.Term{c.str("objects"), ast.ArrayTerm(objects...)})
	}
	if u.ObjectsOmitted != 0 {
		items = append(items, [2]*ast.Term{c.str("objectsOmitted"), ast.InternedTerm(u.ObjectsOmitted)})
	}
	return ast.NewObject(items...)
}

func (c *converter) helmRelease(r *inventory.HelmRelease) ast.Value {
	items := make([][2]*ast.Term, 0, 9)
	items = append(items,
		[2]*ast.Term{c.str("name"), c.str(r.Name)},
		[2]*ast.Term{c.str("namespace"), c.str(r.Namespace)},
		[2]*ast.Term{c.str("chart"), c.str(r.Chart)},
	)
	for _, f := range [...]struct{ name, value string }{
		{"chartVersion", r.ChartVersion}, {"appVersion", r.AppVersion}, {"kubeVersion", r.KubeVersion}, {"status", r.Status},
	} {
		if f.value != "" {
			items = append(items, [2]*ast.Term{c.str(f.name), c.str(f.value)})
		}
	}
	if r.Revision != 0 {
		items = append(items, [2]*ast.Term{c.str("revision"), ast.InternedTerm(r.Revision)})
	}
	if len(r.ManifestAPIs) > 0 {
		apis := make([]*ast.Term, len(r.ManifestAPIs))
		for i := range r.ManifestAPIs {
			apis[i] = ast.NewTerm(c.apiUsage(&r.ManifestAPIs[i]))
		}
		items = append(items, [2]*ast.Term{c.str("manifestApis"), ast.ArrayTerm(apis...)})
	}
	return ast.NewObject(items...)
}

func (c *converter) namespace(n *inventory.Namespace) ast.Value {
	if n.Team == "" {
		return ast.NewObject([2]*ast.Term{c.str("name"), c.str(n.Name)})
	}
	return ast.NewObject([2]*ast.Term{c.str("name"), c.str(n.Name)}, [2]*ast.Term{c.str("team"), c.str(n.Team)})
}

func (c *converter) objectRef(o *inventory.ObjectRef) ast.Value {
	items := make([][2]*ast.Term, 0, 7)
	for _, f := range [...]struct{ name, value string }{{"kind", o.Kind}, {"namespace", o.Namespace}} {
		if f.value != "" {
			items = append(items, [2]*ast.Term{c.str(f.name), c.str(f.value)})
		}
	}
	items = append(items, [2]*ast.Term{c.str("name"), c.str(o.Name)})
	if o.File != "" {
		items = append(items, [2]*ast.Term{c.str("file"), c.str(o.File)})
	}
	if o.Line != 0 {
		items = append(items, [2]*ast.Term{c.str("line"), ast.InternedTerm(o.Line)})
	}
	if o.RenderedFrom != "" {
		items = append(items, [2]*ast.Term{c.str("renderedFrom"), c.str(o.RenderedFrom)})
	}
	if o.Ignore != nil {
		items = append(items, [2]*ast.Term{c.str("ignore"), ast.ObjectTerm(
			[2]*ast.Term{c.str("rules"), c.str(o.Ignore.Rules)},
			[2]*ast.Term{c.str("reason"), c.str(o.Ignore.Reason)},
		)})
	}
	return ast.NewObject(items...)
}

type field struct {
	index     int
	name      string
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []field

func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, field{index: i, name: name, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	fieldCache.Store(t, fs)
	return fs
}

func (c *converter) structValue(v reflect.Value) (ast.Value, error) {
	fs := fieldsOf(v.Type())
	items := make([][2]*ast.Term, 0, len(fs))
	for _, f := range fs {
		fv := v.Field(f.index)
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		t, err := c.term(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		items = append(items, [2]*ast.Term{c.str(f.name), t})
	}
	return ast.NewObject(items...), nil
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
