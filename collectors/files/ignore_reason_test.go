package files

import (
	"strings"
	"testing"
)

// An ignore annotation whose reason holds no letter or digit (inventory.HasReason) is not
// honoured, as one without a reason is, and the scan warns with the file and line.
func TestAnIgnoreReasonOfInvisibleCharactersIsNoReason(t *testing.T) {
	for name, reason := range map[string]string{
		"a zero-width space":     `"\u200b"`,
		"a word joiner":          `"\u2060"`,
		"a byte order mark":      `"\ufeff"`,
		"combining marks only":   `"\u0301\u0302"`,
		"punctuation only":       `"..."`,
		"a raw zero-width space": "\u200b",
	} {
		t.Run(name, func(t *testing.T) {
			res := collect(t, map[string]string{"x.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: shop\n  annotations:\n    upgradescope.basit.engineer/ignore: removed-api\n    upgradescope.basit.engineer/ignore-reason: " + reason + "\n"})
			if obj := res.APIUsage[0].Objects[0]; obj.Ignore != nil {
				t.Errorf("the annotation is honoured: %+v", obj.Ignore)
			}
			if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "x.yaml:1: upgradescope.basit.engineer/ignore without a reason") {
				t.Errorf("warnings = %v", res.Warnings)
			}
		})
	}
}
