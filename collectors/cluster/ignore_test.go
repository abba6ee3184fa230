package cluster

import (
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// A live object's ignore annotation is honoured only with a reason holding a letter or digit
// (inventory.HasReason), as in files mode.
func TestAnIgnoreAnnotationNeedsAReasonWithALetterOrDigit(t *testing.T) {
	for reason, honoured := range map[string]bool{
		"":                   false,
		"   ":                false,
		"\u200b":             false,
		"\u2060\ufeff":       false,
		"\u0301\u0302":       false,
		"...":                false,
		"migrating in Q1":    true,
		" 4 ":                true,
		"\u200bmoving\u200b": true,
	} {
		got := ignoreOf(map[string]string{inventory.AnnotationIgnore: "removed-api", inventory.AnnotationIgnoreReason: reason})
		if (got != nil) != honoured {
			t.Errorf("reason %+q: annotation %+v, want honoured %v", reason, got, honoured)
		}
	}
}
