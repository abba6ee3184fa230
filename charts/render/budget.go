package render

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// MaxProducedBytes bounds what one rendering's template functions may return in all,
// counting each string's bytes and each list or map as 16 bytes an item. A template that
// doubles a string (`{{ $s = print $s $s }}` forty times) reached 6.9 GB before it, and
// peaks near 200 MB with it. Helm's own toYaml, include and tpl are not counted, so a
// chart's rendering spends a few MiB of it.
const MaxProducedBytes = 64 << 20

// helmsOwn are the functions Helm's engine defines or replaces after sprig's, which the
// budget leaves as Helm has them: sprig's env and expandenv are removed there (a chart must
// not read the environment), and the rest are Helm's own.
var helmsOwn = map[string]bool{
	"env": true, "expandenv": true, "fail": true, "getHostByName": true,
	"include": true, "tpl": true, "required": true, "lookup": true,
	"toToml": true, "mustToToml": true, "fromToml": true, "toYaml": true, "mustToYaml": true,
	"toYamlPretty": true, "fromYaml": true, "fromYamlArray": true, "toJson": true,
	"mustToJson": true, "fromJson": true, "fromJsonArray": true,
}

// budget is one rendering's allowance. Every function a template calls counts what it
// returns against MaxProducedBytes and checks whether the rendering was abandoned, so a
// loop growing a string or a list stops at the bound, and a rendering past MaxRenderTime
// stops at its next call instead of running on.
type budget struct {
	produced  atomic.Int64
	abandoned atomic.Bool
}

var errorType = reflect.TypeFor[error]()

// funcs are sprig's functions and text/template's print, printf and println, each counted
// against b, with the bounded ones (boundedFuncs) in place of sprig's.
func (b *budget) funcs() template.FuncMap {
	out := template.FuncMap{"print": b.wrap(fmt.Sprint), "printf": b.wrap(fmt.Sprintf), "println": b.wrap(fmt.Sprintln)}
	for name, fn := range sprig.TxtFuncMap() {
		if !helmsOwn[name] {
			out[name] = b.wrap(fn)
		}
	}
	for name, fn := range boundedFuncs() {
		out[name] = b.wrap(fn)
	}
	return out
}

// wrap returns fn as a function of the same arguments returning (its result, error), which
// refuses to run once the rendering is abandoned and fails once the budget is spent.
func (b *budget) wrap(fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	in := make([]reflect.Type, t.NumIn())
	for i := range in {
		in[i] = t.In(i)
	}
	result := t.Out(0)
	wrapped := reflect.FuncOf(in, []reflect.Type{result, errorType}, t.IsVariadic())
	return reflect.MakeFunc(wrapped, func(args []reflect.Value) []reflect.Value {
		if err := b.check(); err != nil {
			return []reflect.Value{reflect.Zero(result), reflect.ValueOf(&err).Elem()}
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		errValue := reflect.Zero(errorType)
		if len(out) == 2 {
			errValue = out[1]
		}
		if err := b.spend(out[0]); err != nil {
			return []reflect.Value{reflect.Zero(result), reflect.ValueOf(&err).Elem()}
		}
		return []reflect.Value{out[0], errValue}
	}).Interface()
}

var errAbandoned = errors.New("rendering abandoned")

func (b *budget) check() error {
	if b.abandoned.Load() {
		return errAbandoned
	}
	return nil
}

// spend counts v against the budget.
func (b *budget) spend(v reflect.Value) error {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	var n int64
	switch v.Kind() {
	case reflect.String:
		n = int64(v.Len())
	case reflect.Slice, reflect.Map:
		n = 16 * int64(v.Len())
	}
	if b.produced.Add(n) > MaxProducedBytes {
		return fmt.Errorf("template functions returned more than %d MiB, %s", MaxProducedBytes>>20, pastBound)
	}
	return nil
}
