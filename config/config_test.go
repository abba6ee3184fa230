package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, content string) (*Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func TestRulesKeepTheirFieldsAndLines(t *testing.T) {
	c, err := load(t, "# why we ignore\nignore:\n  - key: removed-api/extensions/v1beta1/Ingress\n    namespace: legacy-*\n    file: 'apps/**'\n    reason: retired in Q1\n    expires: 2027-01-31\n  - category: deprecated-api\n    reason: tracked\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ignore) != 2 {
		t.Fatalf("rules = %+v", c.Ignore)
	}
	r := c.Ignore[0]
	if r.Key != "removed-api/extensions/v1beta1/Ingress" || r.Namespace != "legacy-*" || r.File != "apps/**" || r.Expires != "2027-01-31" || r.Line != 3 {
		t.Errorf("first rule = %+v", r)
	}
	if c.Ignore[1].Category != "deprecated-api" || c.Ignore[1].Line != 8 {
		t.Errorf("second rule = %+v", c.Ignore[1])
	}
}

func TestInvalidFilesNameTheLine(t *testing.T) {
	tests := map[string]string{
		"ignore:\n  - key: removed-api/x\n":                     ":2: ignore rule needs a reason",
		"ignore:\n  - key: RemovedAPI\n    reason: r\n":         `:2: key "RemovedAPI" does not start with a category`,
		"ignore:\n  - category: removed-api\n    reason: [a]\n": ":3: reason must be a string",
		"ignore: {}\n":       ":1: ignore must be a list of rules",
		"- just\n- a list\n": ":1: expected a mapping",
		"ignore:\n  - key: a/b\n    reason: r\n  bad indent\n":                                      "yaml: line",
		"ignore:\n  - key: removed-api/x\n    reason: '   '\n":                                      ":2: ignore rule needs a reason",
		"ignore:\n  - key: removed-api/x\n    reason: r\n    key: deprecated-api/y\n":               ":4: key is given twice in one ignore rule",
		"ignore:\n  - key: removed-api/x\n    reason: r\nignore:\n  - category: a\n    reason: r\n": ":4: ignore is given twice",
	}
	for content, want := range tests {
		_, err := load(t, content)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want an error containing %q", content, err, want)
		}
	}
}

func TestAnEmptyFileHasNoRules(t *testing.T) {
	c, err := load(t, "# nothing ignored yet\n")
	if err != nil || len(c.Ignore) != 0 {
		t.Errorf("Load = %+v, %v", c, err)
	}
}

func TestOnlyABoundedRegularFileIsRead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse 2 GiB file: Load must refuse it after reading 1 MiB, not after reading it all.
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("Load(2 GiB file) = %v, want a size refusal", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(directory) = %v, want a refusal", err)
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(/dev/zero) = %v, want a refusal", err)
	}
}

func TestParseReadsAConfigGivenAsBytesNamingItInErrors(t *testing.T) {
	cfg, err := Parse("config", []byte("ignore:\n  - key: removed-api/x\n    reason: migrating\n"))
	if err != nil || len(cfg.Ignore) != 1 || cfg.Ignore[0].Key != "removed-api/x" {
		t.Fatalf("Parse = %+v, %v", cfg, err)
	}
	if _, err := Parse("config", []byte("ignore:\n  - key: x\n")); err == nil || !strings.HasPrefix(err.Error(), "config:") {
		t.Errorf("a rule without a reason: %v, want an error naming config and the line", err)
	}
	if _, err := Parse("config", make([]byte, maxConfigBytes+1)); err == nil {
		t.Error("a config past the size bound was read")
	}
}

// A reason must hold a letter or a digit: one of invisible characters, marks or punctuation
// alone is refused like a blank one, naming the file and the rule's line.
func TestAReasonWithoutALetterOrDigitIsRefused(t *testing.T) {
	for name, reason := range map[string]string{
		"a zero-width space":                  `"\u200b"`,
		"a word joiner":                       `"\u2060"`,
		"a byte order mark":                   `"\ufeff"`,
		"zero-width characters of each kind":  `"\u200b\u200c\u200d\u2060\ufeff"`,
		"combining marks only":                `"\u0301\u0302"`,
		"a no-break and an ideographic space": `"\u00a0\u3000"`,
		"bidi controls":                       `"\u202e\u2066"`,
		"tag characters":                      `"\U000e0041"`,
		"punctuation only":                    `"... —"`,
		"a raw zero-width space":              "\u200b",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, "ignore:\n  - key: removed-api/x\n    reason: "+reason+"\n")
			if err == nil || !strings.Contains(err.Error(), FileName+":2: ignore rule needs a reason") {
				t.Errorf("Load = %v, want the rule's line and a reason asked for", err)
			}
		})
	}
	for name, reason := range map[string]string{
		"a word":                         "migrating",
		"one digit":                      "4",
		"letters in another script":      "移行中",
		"a digit in another script":      "٣",
		"a letter among zero-width ones": `"\u200bx\u200b"`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := load(t, "ignore:\n  - key: removed-api/x\n    reason: "+reason+"\n"); err != nil {
				t.Errorf("Load = %v, want the rule accepted", err)
			}
		})
	}
}
