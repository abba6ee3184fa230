package engine

import (
	"fmt"
	"reflect"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// resultValue hands the query's result term to decode as it is: the report types are filled
// from the OPA value directly, as encoding/json would fill them from its JSON. Writing the
// result as JSON and parsing it again cost about 4 ms on a report of a few hundred findings.
func resultValue(t *ast.Term, _ *rego.EvalContext) (any, error) { return t.Value, nil }

// fromAST fills out from v by the json tags of out's type: a key that is absent or null
// leaves the zero value, an empty array gives an empty (not nil) slice, sets are read in
// their sorted order, and an interface takes v's JSON form. TestReportsReadFromTheValueMatchJSON
// holds it to encoding/json on every golden scenario.
func fromAST(v ast.Value, out reflect.Value) error {
	if _, null := v.(ast.Null); null {
		return nil
	}
	switch out.Kind() {
	case reflect.Pointer:
		if out.IsNil() {
			out.Set(reflect.New(out.Type().Elem()))
		}
		return fromAST(v, out.Elem())
	case reflect.Interface:
		x, err := ast.JSON(v)
		if err != nil {
			return err
		}
		out.Set(reflect.ValueOf(x))
		return nil
	case reflect.String:
		s, ok := v.(ast.String)
		if !ok {
			return mismatch(v, out)
		}
		out.SetString(string(s))
		return nil
	case reflect.Bool:
		b, ok := v.(ast.Boolean)
		if !ok {
			return mismatch(v, out)
		}
		out.SetBool(bool(b))
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(ast.Number)
		i, exact := n.Int64()
		if !ok || !exact {
			return mismatch(v, out)
		}
		out.SetInt(i)
		return nil
	case reflect.Slice:
		return sliceFromAST(v, out)
	case reflect.Map:
		return mapFromAST(v, out)
	case reflect.Struct:
		return structFromAST(v, out)
	}
	return mismatch(v, out)
}

func sliceFromAST(v ast.Value, out reflect.Value) error {
	var arr *ast.Array
	switch x := v.(type) {
	case *ast.Array:
		arr = x
	case ast.Set:
		arr = x.Sorted()
	default:
		return mismatch(v, out)
	}
	s := reflect.MakeSlice(out.Type(), arr.Len(), arr.Len())
	for i := range arr.Len() {
		if err := fromAST(arr.Elem(i).Value, s.Index(i)); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	out.Set(s)
	return nil
}

func mapFromAST(v ast.Value, out reflect.Value) error {
	obj, ok := v.(ast.Object)
	if !ok || out.Type().Key().Kind() != reflect.String {
		return mismatch(v, out)
	}
	m := reflect.MakeMapWithSize(out.Type(), obj.Len())
	for _, k := range obj.Keys() {
		key, ok := k.Value.(ast.String)
		if !ok {
			return mismatch(k.Value, out)
		}
		elem := reflect.New(out.Type().Elem()).Elem()
		if err := fromAST(obj.Get(k).Value, elem); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		m.SetMapIndex(reflect.ValueOf(string(key)).Convert(out.Type().Key()), elem)
	}
	out.Set(m)
	return nil
}

func structFromAST(v ast.Value, out reflect.Value) error {
	obj, ok := v.(ast.Object)
	if !ok {
		return mismatch(v, out)
	}
	for _, f := range fieldsOf(out.Type()) {
		t := obj.Get(ast.StringTerm(f.name))
		if t == nil {
			continue
		}
		if err := fromAST(t.Value, out.Field(f.index)); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

func mismatch(v ast.Value, out reflect.Value) error {
	return fmt.Errorf("got %s, want %s", ast.ValueName(v), out.Type())
}
