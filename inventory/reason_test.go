package inventory

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"
)

// The schema's pattern for ignore.reason and HasReason are one definition written twice: they
// agree on every character, so an inventory the schema accepts never carries a reason the
// collectors would not have honoured.
func TestTheSchemasReasonPatternIsHasReason(t *testing.T) {
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Properties map[string]struct {
					Pattern string `json:"pattern"`
				} `json:"properties"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schemaJSON, &schema); err != nil {
		t.Fatal(err)
	}
	patterns := map[string]bool{}
	for _, def := range schema.Defs {
		if ignore, ok := def.Properties["ignore"]; ok {
			patterns[ignore.Properties["reason"].Pattern] = true
		}
	}
	if len(patterns) != 1 || patterns[""] {
		t.Fatalf("ignore.reason patterns %v: want one, the same wherever an object carries ignore", patterns)
	}
	for p := range patterns {
		re := regexp.MustCompile(p)
		for r := rune(0); r <= utf8.MaxRune; r++ {
			if !utf8.ValidRune(r) {
				continue
			}
			if s := string(r); re.MatchString(s) != HasReason(s) {
				t.Errorf("U+%04X: the schema's pattern says %v, HasReason %v", r, re.MatchString(s), HasReason(s))
			}
		}
	}
}

func TestAReasonHoldsALetterOrADigit(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   bool
	}{
		{"", false},
		{"   \t\n", false},
		{"\u200b", false},
		{"\u2060", false},
		{"\ufeff", false},
		{"\u200b\u200c\u200d\u2060\ufeff", false},
		{"\u0301\u0302\u0303", false},
		{"\u00a0\u3000", false},
		{"\u202e\u2066", false},
		{"\U000e0041\U000e0042", false},
		{"\u3164\u115f\u1160\uffa0", false},
		{"...", false},
		{"— ?!", false},
		{"x", true},
		{"4", true},
		{"\u200bx\u200b", true},
		{"移行中", true},
		{"٣", true},
		{"migrating — ticket 42", true},
	} {
		if got := HasReason(tc.reason); got != tc.want {
			t.Errorf("HasReason(%+q) = %v, want %v", tc.reason, got, tc.want)
		}
	}
}
