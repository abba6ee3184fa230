package packtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/policies/packtest"
)

// pack writes a pack with two rules and a test of the first, plus extra tests.
func pack(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("upgradescope/custom/x/x.rego", "package upgradescope.custom.x\n\n"+
		"findings contains \"a\" if input.a\n\nfindings contains \"b\" if input.b\n")
	write("upgradescope/custom/x/x_test.rego", "package upgradescope.custom.x_test\n\nimport data.upgradescope.custom.x\n\n"+
		"test_a if x.findings == {\"a\"} with input as {\"a\": true}\n"+extra)
	return dir
}

const failingTest = "\ntest_wrong if x.findings == {\"b\"} with input as {\"a\": true}\n"

func TestRunEndsAsOPATestDoes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		extra   string
		opts    packtest.Options
		want    error // a *packtest.Failure is matched by type
		failure bool
		out     string
	}{
		{name: "every test passes", out: "PASS: 1/1"},
		{name: "a failing test is a Failure", extra: failingTest, failure: true, out: "FAIL: 1/2"},
		{name: "Run picks the tests", extra: failingTest, opts: packtest.Options{Run: "test_a"}, out: "PASS: 1/1"},
		{name: "nothing matching Run", opts: packtest.Options{Run: "nothing"}, want: packtest.ErrNoTests},
		{name: "coverage below the threshold is a Failure", opts: packtest.Options{Coverage: true, Threshold: 90}, failure: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.MemoryMiB = 256
			var out bytes.Buffer
			err := packtest.Run(t.Context(), &out, []string{pack(t, tt.extra)}, tt.opts)
			var failure *packtest.Failure
			switch {
			case tt.failure && !errors.As(err, &failure):
				t.Errorf("err = %v, want a *Failure", err)
			case !tt.failure && !errors.Is(err, tt.want):
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(out.String(), tt.out) {
				t.Errorf("out %q, want it saying %q", out.String(), tt.out)
			}
		})
	}
}

// The coverage report covers the pack's modules, not the built-in library loaded beside it.
func TestCoverageCoversThePackOnly(t *testing.T) {
	var out bytes.Buffer
	if err := packtest.Run(t.Context(), &out, []string{pack(t, "")}, packtest.Options{Coverage: true, MemoryMiB: 256}); err != nil {
		t.Fatal(err)
	}
	var report struct {
		Files    map[string]json.RawMessage `json:"files"`
		Coverage float64                    `json:"coverage"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(report.Files) != 2 || report.Coverage <= 0 || report.Coverage >= 100 {
		t.Errorf("files %v, coverage %g: want the pack's two files, partly covered", report.Files, report.Coverage)
	}
}
