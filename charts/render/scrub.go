package render

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// tplCall is where Helm's message about a failing tpl call starts; all it says after that
// is about the text tpl was given (usually a value): that text quoted, then Go's parse or
// execution error naming pieces of it.
const tplCall = "error calling tpl: "

// scrub returns err's text with what a value may have put in it taken out: everything after
// tplCall, and every string of values (maps and slices walked) of three bytes or more,
// replaced by "…". Helm's messages may quote what a template was given: tpl quotes the whole
// string it could not parse and Go's parser then names a token of it, and a chart's fail or
// required may print a value. The error becomes a version's Error in the inventory, which
// leaves the scan, and values never do. Each value is looked for as it is and as Go quotes
// it (%q), longest first so a value inside another is not left half replaced. The result
// wraps nothing: the original error would carry the values on.
func scrub(err error, values map[string]any) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if before, _, found := strings.Cut(text, tplCall); found {
		text = before + tplCall + "…"
	}
	seen := map[string]bool{}
	collectStrings(values, seen)
	secrets := make([]string, 0, 2*len(seen))
	for s := range seen {
		secrets = append(secrets, s)
		if q := strconv.Quote(s); q[1:len(q)-1] != s {
			secrets = append(secrets, q[1:len(q)-1])
		}
	}
	sort.Slice(secrets, func(i, j int) bool {
		if len(secrets[i]) != len(secrets[j]) {
			return len(secrets[i]) > len(secrets[j])
		}
		return secrets[i] < secrets[j]
	})
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, "…")
	}
	return errors.New(text)
}

// collectStrings adds every string of three bytes or more that v holds to out.
func collectStrings(v any, out map[string]bool) {
	switch v := v.(type) {
	case string:
		if len(v) >= 3 {
			out[v] = true
		}
	case map[string]any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case []any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case []string:
		for _, e := range v {
			collectStrings(e, out)
		}
	case map[string]string:
		for _, e := range v {
			collectStrings(e, out)
		}
	}
}
