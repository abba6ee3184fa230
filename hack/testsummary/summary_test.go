package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/go-test.json is `go test -json ./...` over three packages: one with a passing,
// a skipped and a failing test (with a subtest), one whose only test skips, one that does not
// build.
func TestSummaryPrintsWhatGoTestPrintsAndCountsSkipsByReason(t *testing.T) {
	in, err := os.Open("testdata/go-test.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	s := newSummary(&out)
	if err := s.read(in); err != nil {
		t.Fatal(err)
	}
	if failed := s.finish(); !failed {
		t.Error("finish reported success for a failing run")
	}
	want := "# gtj/c [gtj/c.test]\n" +
		"c/c_test.go:3:27: undefined: undefined\n" +
		"    a_test.go:5: boom\n" +
		"--- FAIL: TestFail/sub (0.00s)\n" +
		"--- FAIL: TestFail (0.00s)\n" +
		"FAIL\n" +
		"FAIL\tgtj/a\t0.025s\n" +
		"FAIL\tgtj/c [build failed]\n" +
		"ok  \tgtj/b\t0.032s\n" +
		"2 tests skipped:\n" +
		"     2  UPGRADESCOPE_KUBECONFIG is not set: run it\n" +
		"FAIL\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(out.String(), "hidden") {
		t.Error("a passing test's log was printed")
	}
}

func TestSummaryOfAPassingRunEndsWithTheResultLinesAndNoFailure(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
{"Action":"output","Package":"q","Output":"?   \tq\t[no test files]\n"}
{"Action":"skip","Package":"q"}
`
	var out bytes.Buffer
	s := newSummary(&out)
	if err := s.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if s.finish() {
		t.Error("finish reported a failure")
	}
	if want := "ok  \tp\t0.1s\n?   \tq\t[no test files]\nno test skipped\n"; out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestAPackageThatNeverReportsItsResultFails(t *testing.T) {
	in := `{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
not json: go test was killed
`
	var out bytes.Buffer
	s := newSummary(&out)
	if err := s.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if !s.finish() || !strings.HasPrefix(out.String(), "not json: go test was killed\n") {
		t.Errorf("output %q; want the raw line passed through and a failure", out.String())
	}
}
