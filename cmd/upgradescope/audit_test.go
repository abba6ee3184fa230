package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// auditLine is the i-th request of userAgent to a deprecated API, completed at at, as
// kube-apiserver 1.35 logs it at Metadata level (docs/audit-policy.yaml).
func auditLine(userAgent string, i int, at string) string {
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"00000000-0000-0000-0000-%012d",`+
		`"stage":"ResponseComplete","requestURI":"/apis/networking.k8s.io/v1beta1/servicecidrs?limit=1","verb":"list",`+
		`"user":{"username":"system:serviceaccount:ci:deployer","groups":["system:serviceaccounts","system:authenticated"]},`+
		`"sourceIPs":["10.1.2.3"],"userAgent":%q,"objectRef":{"resource":"servicecidrs","apiGroup":"networking.k8s.io","apiVersion":"v1beta1"},`+
		`"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":%q,"stageTimestamp":%q,`+
		`"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"","k8s.io/deprecated":"true","k8s.io/removed-release":"1.37"}}`+"\n",
		i, userAgent, at, at)
}

func auditLog(userAgent string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(auditLine(userAgent, i, fmt.Sprintf("2026-11-28T10:00:%02d.000000Z", i)))
	}
	return b.String()
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// runCLIWithStdin is runCLI with stdin holding in.
func runCLIWithStdin(in string, args ...string) result {
	var out, errb bytes.Buffer
	code := run(args, streams{in: strings.NewReader(in), out: &out, err: &errb})
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func auditSection(t *testing.T, r result) *inventory.AuditCalls {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("inventory exit %d: %s", r.code, r.stderr)
	}
	var doc inventory.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.Capabilities[inventory.CapAuditLog]; !c.Available || doc.AuditCalls == nil {
		t.Fatalf("audit-log capability %+v, section %v: want both", c, doc.AuditCalls)
	}
	return doc.AuditCalls
}

// An exported log, a directory of it and its gzip rotations, and standard input name the
// same caller, counted across them, in a window that starts --audit-since before the
// collection's clock.
func TestTheInventoryReadsAnAuditLogFromFilesDirectoriesAndStandardInput(t *testing.T) {
	dir := t.TempDir()
	const ua = "deployer/1.0"
	write(t, dir, "logs/audit-2026-11-28T10-00-00.000.log.gz", gzipped(t, auditLog(ua, 3)))
	write(t, dir, "logs/audit.log", auditLog(ua, 2))
	single := write(t, dir, "one.log", auditLog(ua, 4))
	tests := []struct {
		name  string
		args  []string
		stdin string
		calls int64
		since string
	}{
		{"a file", []string{"--audit-log", single}, "", 4, "2026-10-30T12:00:00Z"},
		{"a directory of a log and its rotations", []string{"--audit-log", filepath.Join(dir, "logs")}, "", 5, "2026-10-30T12:00:00Z"},
		{"standard input beside a file", []string{"--audit-log", "-", "--audit-log", single}, auditLog(ua, 1), 5, "2026-10-30T12:00:00Z"},
		{"a window of days", []string{"--audit-log", single, "--audit-since", "7d"}, "", 4, "2026-11-22T12:00:00Z"},
		{"a window as a duration", []string{"--audit-log", single, "--audit-since", "36h"}, "", 4, "2026-11-28T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"inventory", "--files", examples, pinned}, tt.args...)
			s := auditSection(t, runCLIWithStdin(tt.stdin, args...))
			if s.Since != tt.since {
				t.Errorf("window since %s, want %s (the collection's clock, %s, less --audit-since)", s.Since, tt.since, pinned)
			}
			if len(s.Callers) != 1 || s.Callers[0].UserAgent != ua || s.Callers[0].Count != tt.calls || s.Callers[0].ServiceAccount != "ci/deployer" {
				t.Errorf("callers %+v, want %d calls of %s", s.Callers, tt.calls, ua)
			}
		})
	}
}

// A log with lines that are no audit event is read for what it holds: the scan judges it
// and says, once, how many lines it skipped and where the first was, never what it held.
func TestAScanCountsMalformedAuditLinesWithoutQuotingThem(t *testing.T) {
	dir := t.TempDir()
	log := auditLine("deployer/1.0", 0, "2026-11-28T10:00:00.000000Z") +
		"Authorization: Bearer s3cr3t-token\n" +
		auditLine("deployer/1.0", 1, "2026-11-28T10:00:01.000000Z") +
		`{"kind":"Event","stage":` + "\n"
	path := write(t, dir, "audit.log", log)
	r := runCLI(t, "scan", "--files", examples, "--audit-log", path, "--target", "1.37", "-o", "json", pinned)
	if r.code == exitErr {
		t.Fatalf("exit 1: %s", r.stderr)
	}
	want := "warning: the audit log has 2 lines that are not audit events (skipped; the first at " + path + ":2)\n"
	if strings.Count(r.stderr, "the audit log") != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want the one line %q", r.stderr, want)
	}
	if strings.Contains(r.stderr+r.stdout, "s3cr3t") {
		t.Error("the malformed line's content was printed")
	}
}

// A file that passes the check before collecting but cannot be read as a log ends the
// command, naming it.
func TestAnAuditLogThatCannotBeReadEndsTheScanNamingIt(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "audit.log", auditLog("deployer/1.0", 1))
	broken := write(t, dir, "audit-2026-11-27T00-00-00.000.log.gz", "\x1f\x8bnot a gzip header")
	r := runCLI(t, "scan", "--files", examples, "--audit-log", good, "--audit-log", broken, "--target", "1.37", pinned)
	if r.code != exitErr || !strings.Contains(r.stderr, "--audit-log") || !strings.Contains(r.stderr, broken) || r.stdout != "" {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want 1, nothing judged, and %s named", r.code, len(r.stdout), r.stderr, broken)
	}
}

// A pipe nobody writes to never returns from a read: the reading still ends at --timeout,
// on standard input and on a named pipe (whose open waits for a writer).
func TestAnIdleAuditPipeEndsAtTheTimeout(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	idle, w := io.Pipe()
	defer w.Close()
	for _, tc := range []struct {
		name string
		in   io.Reader
		path string
	}{
		{"standard input that sends nothing", idle, "-"},
		{"a named pipe no one writes to", strings.NewReader(""), fifo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run([]string{"scan", "--files", examples, "--audit-log", tc.path, "--target", "1.37", "--timeout", "1s"},
					streams{in: tc.in, out: &out, err: &errb})
			}()
			select {
			case code := <-done:
				if code != exitErr || !strings.Contains(errb.String(), "raise --timeout") {
					t.Errorf("exit %d, stderr %q; want 1 and a word on --timeout", code, errb.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the scan still waits for the pipe a minute later")
			}
		})
	}
}
