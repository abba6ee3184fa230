package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden sections in testdata/; read them before committing")

// The lines in testdata/kube-apiserver-1.35.log are the 1.35 API server's own (hack/kube-env.sh,
// docs/audit-policy.yaml): two of its watches, then a client calling the deprecated
// networking.k8s.io/v1beta1 servicecidrs with kubectl's and another user agent.
func TestARealAPIServersLogReadsAsItsGolden(t *testing.T) {
	s, c := collect(t, "", "testdata/kube-apiserver-1.35.log")
	if !c.Available || c.Partial {
		t.Errorf("capability = %+v, want available and whole", c)
	}
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/kube-apiserver-1.35.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("section differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestADirectoryIsReadAsItsRotationsThenTheActiveLog(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "audit.log", []byte(lines(t, fsList("late/1"))))
	// kube-apiserver's rotations, compressed, named by when they were rotated.
	write(t, dir, "audit-2026-12-01T10-16-52.123.log.gz", gz(t, lines(t, fsList("early/1"), fsList("early/1"))))
	write(t, dir, "audit-2026-12-02T10-16-52.123.log.gz", gz(t, lines(t, fsList("early/1"))))
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "old"), "audit.log", []byte(lines(t, fsList("nested/1"))))

	s, _ := collect(t, "", dir)
	var paths []string
	for _, src := range s.Sources {
		paths = append(paths, filepath.Base(src.Path))
	}
	want := "audit-2026-12-01T10-16-52.123.log.gz audit-2026-12-02T10-16-52.123.log.gz audit.log"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("sources = %s, want %s (by name, not the nested directory)", got, want)
	}
	if s.Events != 4 || len(s.Callers) != 2 || s.Callers[0].UserAgent != "early/1" || s.Callers[0].Count != 3 {
		t.Errorf("events %d, callers %+v; want 4 events, early/1 three times first", s.Events, s.Callers)
	}
}

func TestGzipIsToldByItsBytesNotItsName(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"compressed.log", gz(t, lines(t, fsList("a/1")))},
		{"plain.log.gz", []byte(lines(t, fsList("b/1")))},
		// Concatenated gzip members read as one stream, as zcat reads them.
		{"members", append(gz(t, lines(t, fsList("c/1"))), gz(t, lines(t, fsList("c/1")))...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, c := collect(t, "", write(t, dir, tt.name, tt.data))
			if s.Malformed != 0 || s.DeprecatedRequests == 0 || c.Partial {
				t.Errorf("section %+v, capability %+v: want every line read", s, c)
			}
		})
	}
}

func TestStandardInputIsReadOnceAndNamedDash(t *testing.T) {
	s, _ := stdin(t, lines(t, fsList("a/1")))
	if len(s.Sources) != 1 || s.Sources[0].Path != "-" || s.Sources[0].Events != 1 || s.Sources[0].Format != "event" {
		t.Errorf("sources = %+v, want - with one event", s.Sources)
	}
	_, _, err := Collect(context.Background(), Options{Paths: []string{"-", "-"}, Stdin: strings.NewReader("")})
	if err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf("reading - twice: %v, want an error", err)
	}
	_, _, err = Collect(context.Background(), Options{Paths: []string{"-"}})
	if err == nil || !strings.Contains(err.Error(), "no standard input") {
		t.Errorf("reading - without standard input: %v, want an error", err)
	}
}

// CloudWatch's export to S3 writes each event after its ingestion time.
func TestTimestampPrefixedLinesAreRead(t *testing.T) {
	log := "2026-12-01T10:00:00.123Z " + fsList("a/1").line(t) +
		"2026-12-01T10:00:01Z\t" + fsList("a/1").line(t) +
		"2026-12-01T10:00:02+02:00 " + fsList("a/1").line(t) +
		"yesterday " + fsList("a/1").line(t)
	s, _ := stdin(t, log)
	if s.DeprecatedRequests != 2 || s.Malformed != 2 {
		t.Errorf("%d deprecated, %d malformed, want 2 read after a timestamp and a space, 2 malformed (a tab, a word): %v",
			s.DeprecatedRequests, s.Malformed, s.MalformedAt)
	}
}

func TestUnreadablePathsAreErrorsNamingThem(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(empty, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"a missing file", filepath.Join(dir, "missing.log"), "missing.log: no such file"},
		{"a directory holding no file", empty, "empty: it holds no file"},
		{"a corrupt gzip header", write(t, dir, "bad.gz", []byte("\x1f\x8b\x09garbage")), "bad.gz: not a readable gzip stream"},
		{"a gzip magic and nothing else", write(t, dir, "short.gz", []byte("\x1f\x8b")), "short.gz: not a readable gzip stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Collect(context.Background(), Options{Paths: []string{tt.path}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one saying %q", err, tt.want)
			}
		})
	}
	t.Run("a file without read permission", func(t *testing.T) {
		p := write(t, dir, "secret.log", []byte(lines(t, fsList("a/1"))))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Open(p); err == nil {
			f.Close()
			t.Skip("running as a user every file is readable to")
		}
		_, _, err := Collect(context.Background(), Options{Paths: []string{p}})
		if err == nil || !strings.Contains(err.Error(), "secret.log: permission denied") {
			t.Errorf("error = %v, want permission denied naming the file", err)
		}
	})
}

func TestATruncatedGzipKeepsWhatWasRead(t *testing.T) {
	var log strings.Builder
	for range 2000 {
		log.WriteString(fsList("a/1").line(t))
	}
	whole := gz(t, log.String())
	dir := t.TempDir()
	cut := write(t, dir, "audit-1.log.gz", whole[:len(whole)/2])
	next := write(t, dir, "audit.log", []byte(lines(t, fsList("b/1"))))

	s, c := collect(t, "", cut, next)
	if s.Sources[0].Events == 0 || s.Sources[0].Events >= 2000 || s.Sources[0].Malformed != 1 {
		t.Errorf("the cut file: %+v, want part of its events and one malformed entry", s.Sources[0])
	}
	if s.Sources[1].Events != 1 {
		t.Errorf("the next file: %+v, want it read", s.Sources[1])
	}
	if !c.Partial || len(s.MalformedAt) != 1 || !strings.Contains(s.MalformedAt[0], "ends early") {
		t.Errorf("capability %+v, malformed %v: want partial, naming the truncation", c, s.MalformedAt)
	}
}

func TestAGzipCorruptMidwayIsCountedAndReadingGoesOn(t *testing.T) {
	var log strings.Builder
	for range 2000 {
		log.WriteString(fsList("a/1").line(t))
	}
	data := gz(t, log.String())
	for i := len(data) / 2; i < len(data)/2+64; i++ {
		data[i] ^= 0x5a
	}
	dir := t.TempDir()
	s, _ := collect(t, "", write(t, dir, "a.gz", data), write(t, dir, "b.log", []byte(lines(t, fsList("b/1")))))
	if s.Sources[0].Malformed != 1 || !strings.HasPrefix(s.MalformedAt[0], filepath.Join(dir, "a.gz")+":") || s.Sources[1].Events != 1 {
		t.Errorf("sources %+v, malformed %v: want the corruption counted and named, the next file read", s.Sources, s.MalformedAt)
	}
}

// A line past maxRecord is counted and read through without being kept.
func TestALineLongerThanTheBoundIsSkippedWithoutBeingKept(t *testing.T) {
	long := `{"kind":"Event","auditID":"x","requestObject":"` + strings.Repeat("a", maxRecord+1) + `"}` + "\n"
	r := newReader(context.Background(), NewAggregator(since), strings.NewReader(long+lines(t, fsList("a/1"))))
	if err := r.readPath("-"); err != nil {
		t.Fatal(err)
	}
	s := r.agg.Section()
	if s.Malformed != 1 || s.MalformedAt[0] != "-:1: line longer than 16 MiB" || s.DeprecatedRequests != 1 {
		t.Errorf("malformed %v, %d deprecated: want line 1 skipped, line 2 read", s.MalformedAt, s.DeprecatedRequests)
	}
	if cap(r.long) > maxRecord {
		t.Errorf("kept %d bytes of the long line, want at most %d", cap(r.long), maxRecord)
	}
}

func TestACancelledContextStopsReading(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log strings.Builder
	for range checkEvery + 1 {
		log.WriteString(fsList("a/1").line(t))
	}
	_, _, err := Collect(ctx, Options{Paths: []string{"-"}, Stdin: strings.NewReader(log.String())})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// infinite writes the same line forever.
type infinite struct {
	line []byte
	off  int
}

func (r *infinite) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.line[r.off:])
		n += k
		r.off = (r.off + k) % len(r.line)
	}
	return n, nil
}

func TestCancellingStopsAnEndlessStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &infinite{line: []byte(fsList("a/1").line(t))}
	done := make(chan error, 1)
	go func() {
		_, _, err := Collect(ctx, Options{Paths: []string{"-"}, Stdin: r})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestNoPathIsAnError(t *testing.T) {
	if _, _, err := Collect(context.Background(), Options{}); err == nil {
		t.Error("Collect with no path: no error")
	}
}

func TestFramingIsToldByTheFirstLine(t *testing.T) {
	event := strings.TrimSpace(fsList("a/1").line(t))
	indented, err := json.MarshalIndent(fsList("a/1").event(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, in string
		lines    bool
	}{
		{"JSON lines", event + "\n" + event + "\n", true},
		{"JSON lines after blank lines and a byte-order mark", "\xef\xbb\xbf\n\n  " + event + "\n", true},
		{"a broken first line among JSON lines", `{"kind":"Ev` + "\n" + event + "\n", true},
		{"an indented object", string(indented) + "\n", false},
		{"an array", "[" + event + "]\n", false},
		{"an object on one line", event, true},
		{"timestamped lines", "2026-12-01T10:00:00Z " + event + "\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(context.Background(), NewAggregator(since), nil)
			r.text = bufio.NewReaderSize(strings.NewReader(tt.in), lineBuffer)
			lines, _, err := r.framing()
			if err != nil || lines != tt.lines {
				t.Errorf("framing() = lines %v, %v; want lines %v", lines, err, tt.lines)
			}
		})
	}
}

func TestAFirstLineLongerThanTheBufferIsReadAsALine(t *testing.T) {
	c := fsList("a/1")
	c.requestObject = `{"data":"` + strings.Repeat("x", lineBuffer) + `"}`
	s, _ := stdin(t, lines(t, c, fsList("a/1")))
	if s.DeprecatedRequests != 2 || s.Malformed != 0 {
		t.Errorf("%d deprecated, %d malformed (%v): want both read", s.DeprecatedRequests, s.Malformed, s.MalformedAt)
	}
}

func TestEmptyInputsReadAsNothing(t *testing.T) {
	for _, in := range []string{"", "\n\n", "   ", "\xef\xbb\xbf"} {
		s, c := stdin(t, in)
		want := "the audit log holds no audit event: no record read"
		if s.Events != 0 || s.Malformed != 0 || c.Available || c.Reason != want {
			t.Errorf("%q: section %+v, capability %+v; want nothing, not available: %s", in, s, c, want)
		}
	}
}

func TestAFileNamedByOverlappingPathsIsReadOnce(t *testing.T) {
	for _, tt := range []struct {
		name  string
		paths func(dir, log string) []string
	}{
		{"the same file twice", func(dir, log string) []string { return []string{log, log} }},
		{"a directory holding a link to its own log", func(dir, log string) []string {
			if err := os.Symlink(log, filepath.Join(dir, "audit-link.log")); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}},
		{"a file alone and within its directory", func(dir, log string) []string { return []string{log, dir} }},
		{"a directory and a file in it", func(dir, log string) []string { return []string{dir, log} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			log := write(t, dir, "audit.log", []byte(lines(t, fsList("a/1"))))
			s, _ := collect(t, "", tt.paths(dir, log)...)
			if s.DeprecatedRequests != 1 || len(s.Sources) != 1 || s.Callers[0].Count != 1 {
				t.Errorf("%d deprecated requests, sources %+v; want the file read once", s.DeprecatedRequests, s.Sources)
			}
		})
	}
}

func TestALogWithNoAuditEventIsNotAssessed(t *testing.T) {
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(i*7919 + i>>8)
	}
	for _, tt := range []struct {
		name, in, want string
	}{
		{"an empty file", "", "the audit log holds no audit event: no record read"},
		{"random bytes", string(random), "the audit log holds no audit event: "},
		{"records that are not audit events", `{"kind":"Pod"}` + "\n", "the audit log holds no audit event: 1 malformed record(s) (first: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := write(t, t.TempDir(), "audit.log", []byte(tt.in))
			_, c := collect(t, "", log)
			if c.Available || !strings.HasPrefix(c.Reason, tt.want) {
				t.Errorf("capability %+v, want not available: %s…", c, tt.want)
			}
		})
	}
}
