package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), with the build events of Go 1.24+.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// line is one line of output and the test that wrote it ("" for the package).
type line struct{ test, text string }

// summary replays a package's output once the package ends, when it is known which of its
// tests failed: go test without -v shows only those.
type summary struct {
	out     io.Writer
	pending map[string][]line          // package → output so far
	failed  map[string]map[string]bool // package → failed tests
	order   []string                   // packages in the order they started writing
	skips   map[string]int             // reason → tests skipped for it
	anyFail bool
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, pending: map[string][]line{}, failed: map[string]map[string]bool{}, skips: map[string]int{}}
}

// read consumes the stream; lines that are not JSON (go's own errors) pass through.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.out, sc.Text())
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Action == "build-fail":
		s.anyFail = true
	case e.Action == "output":
		if _, ok := s.pending[e.Package]; !ok {
			s.order = append(s.order, e.Package)
		}
		s.pending[e.Package] = append(s.pending[e.Package], line{e.Test, e.Output})
	case e.Test != "" && e.Action == "fail":
		if s.failed[e.Package] == nil {
			s.failed[e.Package] = map[string]bool{}
		}
		s.failed[e.Package][e.Test] = true
		s.anyFail = true
	case e.Test != "" && e.Action == "skip":
		s.skips[skipReason(s.pending[e.Package], e.Test)]++
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		s.anyFail = s.anyFail || e.Action == "fail"
		s.flush(e.Package)
	}
}

// flush prints a finished package as go test would have.
func (s *summary) flush(pkg string) {
	for _, l := range s.pending[pkg] {
		if l.test == "" && l.text != "PASS\n" || l.test != "" && s.failed[pkg][l.test] && !strings.HasPrefix(l.text, "=== ") {
			fmt.Fprint(s.out, l.text)
		}
	}
	delete(s.pending, pkg)
}

// finish prints what never finished, the skip summary and go test's closing FAIL; it reports
// whether anything failed.
func (s *summary) finish() bool {
	for _, pkg := range s.order {
		if _, ok := s.pending[pkg]; ok {
			s.anyFail = true // a package that never reported its result (killed, timed out)
			s.flush(pkg)
		}
	}
	s.printSkips()
	if s.anyFail {
		fmt.Fprintln(s.out, "FAIL")
	}
	return s.anyFail
}

func (s *summary) printSkips() {
	total := 0
	reasons := make([]string, 0, len(s.skips))
	for r, n := range s.skips {
		total += n
		reasons = append(reasons, r)
	}
	if total == 0 {
		fmt.Fprintln(s.out, "no test skipped")
		return
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := reasons[i], reasons[j]
		return s.skips[a] > s.skips[b] || s.skips[a] == s.skips[b] && a < b
	})
	fmt.Fprintf(s.out, "%d %s skipped:\n", total, plural(total, "test", "tests"))
	for _, r := range reasons {
		fmt.Fprintf(s.out, "%6d  %s\n", s.skips[r], r)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// logPrefix is the "file_test.go:12: " that t.Skip puts before its message.
var logPrefix = regexp.MustCompile(`^\S+\.go:\d+: `)

// skipReason is the first line test logged that is not go test's own framing.
func skipReason(lines []line, test string) string {
	for _, l := range lines {
		text := strings.TrimSpace(l.text)
		if l.test != test || text == "" || strings.HasPrefix(text, "=== ") || strings.HasPrefix(text, "--- ") {
			continue
		}
		return logPrefix.ReplaceAllString(text, "")
	}
	return "no reason given"
}
