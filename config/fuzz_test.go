package config

import (
	"errors"
	"strings"
	"testing"
	"unicode"
)

// FuzzParse feeds arbitrary bytes to the suppression config parser. It must never panic; a
// refusal names a line; and every rule it accepts passes the same checks an annotation's rule
// does, with a reason that holds a letter or digit.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"ignore:\n- rule: removed-api\n  reason: migrating in Q3\n  expires: 2027-01-31\n",
		"ignore:\n- {rule: eol-addon, reason: x, namespace: web, name: shop}\n",
		"ignore:\n- rule: a\n  rule: b\n  reason: dup\n",
		"ignore: &a [*a]\n",
		"ignore:\n- reason: \"  \"\n  rule: removed-api\n",
		"ignore:\n- key: removed-api/x\n  reason: \"\\u200b\"\n",
		"ignore:\n- key: removed-api/x\n  reason: \"\\u0301\\ufeff\"\n",
		"ignore: []\nignore: []\n",
		"- 1\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := parse(data)
		if err != nil {
			var le *lineError
			if errors.As(err, &le) && le.line < 1 {
				t.Errorf("refusal %q names line %d", err, le.line)
			}
			if !errors.As(err, &le) && !strings.Contains(err.Error(), "line") {
				t.Errorf("refusal %q names no line", err)
			}
			return
		}
		for _, r := range rules {
			if err := CheckRule(r); err != nil {
				t.Errorf("accepted rule %+v fails CheckRule: %v", r, err)
			}
			if !strings.ContainsFunc(r.Reason, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
				t.Errorf("accepted rule %+v has a reason without a letter or digit", r)
			}
		}
	})
}
