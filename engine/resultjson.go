package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// resultJSON writes the query's result term straight to JSON, which decode reads into the
// report types. OPA's default turns the term into Go maps first, which decode would then
// marshal again: on a large report that double trip costs more than writing it once.
func resultJSON(t *ast.Term, _ *rego.EvalContext) (any, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, t.Value); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

func writeJSON(buf *bytes.Buffer, v ast.Value) error {
	switch x := v.(type) {
	case ast.Null:
		buf.WriteString("null")
	case ast.Boolean:
		fmt.Fprint(buf, bool(x))
	case ast.Number:
		buf.WriteString(string(x))
	case ast.String:
		writeString(buf, string(x))
	case *ast.Array:
		return writeSeq(buf, x.Len(), func(i int) ast.Value { return x.Elem(i).Value })
	case ast.Set:
		// Sets come sorted (EvalSortSets) and become arrays, as in OPA's own JSON.
		elems := x.Sorted()
		return writeSeq(buf, elems.Len(), func(i int) ast.Value { return elems.Elem(i).Value })
	case ast.Object:
		buf.WriteByte('{')
		for i, k := range x.Keys() {
			s, ok := k.Value.(ast.String)
			if !ok {
				return fmt.Errorf("report object key %v is not a string", k)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, s); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, x.Get(k).Value); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("report holds %T, which has no JSON form", v)
	}
	return nil
}

func writeSeq(buf *bytes.Buffer, n int, elem func(int) ast.Value) error {
	buf.WriteByte('[')
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeJSON(buf, elem(i)); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeString writes s as a JSON string. Most report strings are plain printable ASCII and
// are written as they are; any other goes through encoding/json's escaping.
func writeString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s) // a Go string always marshals
			buf.Write(b)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}
