package rehearsal

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// redacted stands for a Secret's value in a message.
const redacted = "<redacted>"

// typedValue is how server-side apply's typed patch names a value of the wrong type
// (".stringData.pin: expected string, got &value.valueUnstructured{Value:1234}"): it prints
// the value, to the end of the line.
var typedValue = regexp.MustCompile(`(expected [^,\n]*, got )[^\n]*`)

// minRedacted is the shortest value scrubbed from a message by its text: a shorter one would
// cut letters out of the message's own words, and the typed-patch form is cut whatever its size.
const minRedacted = 4

// redactSecret keeps a Secret's data out of what the API server said about it, which the
// report prints: server-side apply echoes a value of the wrong type, and an admission policy
// or webhook of a test cluster may quote any field. Other objects' messages are kept.
func redactSecret(obj *unstructured.Unstructured, msg string) string {
	if obj.GetAPIVersion() != "v1" || obj.GetKind() != "Secret" {
		return msg
	}
	msg = typedValue.ReplaceAllString(msg, "${1}"+redacted)
	for _, v := range secretValues(obj) {
		msg = strings.ReplaceAll(msg, v, redacted)
	}
	return msg
}

// secretValues are the texts a Secret's data and stringData values may be printed as, the
// longest first so that a value containing another is replaced whole.
func secretValues(obj *unstructured.Unstructured) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			out = append(out, v)
			if dec, err := base64.StdEncoding.DecodeString(v); err == nil {
				out = append(out, string(dec))
			}
		case nil:
		default:
			out = append(out, fmt.Sprint(v))
		}
	}
	for _, field := range []string{"data", "stringData"} {
		walk(obj.Object[field])
	}
	out = slices.DeleteFunc(out, func(s string) bool { return len(s) < minRedacted })
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return slices.Compact(out)
}
