package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/upgradescope/upgradescope/inventory"
)

// render is a found value as an observation lists it: a string as it is, anything else as its
// JSON text (80, true, {"path":"/x"}) as encoding/json writes it, cut to the document's string
// bound. The text is written only as far as the cut, so a found map holding a large subtree
// many times over (aliases) costs its first characters, not its size; what is written is
// charged to m. A float that is not finite, which JSON cannot spell, is written as Go prints
// it (NaN, +Inf).
func render(v any, m *meter) string {
	if s, ok := v.(string); ok {
		m.chargeBytes(min(len(s), utf8.UTFMax*inventory.MaxStringLength))
		return inventory.BoundString(s)
	}
	w := jsonWriter{m: m}
	w.value(v)
	return inventory.BoundString(string(w.buf))
}

// jsonWriter writes JSON until it holds more than the string bound's characters.
type jsonWriter struct {
	buf []byte
	m   *meter
}

// full says whether the text already runs past the bound: any more would be cut.
func (w *jsonWriter) full() bool {
	return len(w.buf) > utf8.UTFMax*inventory.MaxStringLength || w.m.done()
}

func (w *jsonWriter) value(v any) {
	if w.full() || !w.m.charge(1) {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		w.object(v)
	case []any:
		w.buf = append(w.buf, '[')
		for i, e := range v {
			if w.full() {
				return
			}
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.value(e)
		}
		w.buf = append(w.buf, ']')
	case string:
		w.scalar(inventory.BoundString(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			w.buf = fmt.Append(w.buf, v)
			return
		}
		w.scalar(v)
	default:
		w.scalar(v)
	}
}

func (w *jsonWriter) object(v map[string]any) {
	w.buf = append(w.buf, '{')
	for i, k := range sortedKeys(v, w.m) {
		if w.full() {
			return
		}
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.scalar(inventory.BoundString(k))
		w.buf = append(w.buf, ':')
		w.value(v[k])
	}
	w.buf = append(w.buf, '}')
}

// scalar writes what is not a map or a list as encoding/json writes it, or as Go prints it
// where encoding/json cannot.
func (w *jsonWriter) scalar(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Append(nil, v)
	}
	w.m.chargeBytes(len(b))
	w.buf = append(w.buf, b...)
}
