package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest/rawtar"
)

// Issue 30, item 8: a bundle is refused on the tar headers it holds, before a byte of an
// entry is read. A sparse entry (every format archive/tar expands) used to spin scan, bundle
// verify and bundle inspect on terabytes of zeros no byte of the bundle held; a 200 GiB
// entry took 12 s and exited 0. Entries that are neither files nor directories are refused
// too, and a FIFO given as a bundle is refused unopened.
func TestHostileTarEntriesInBundlesAreRefusedOnTheirHeaders(t *testing.T) {
	const tib = 1 << 40
	bundleOf := func(name string, entries ...rawtar.Entry) func(*testing.T, string) string {
		return func(t *testing.T, dir string) string {
			manifest := rawtar.Manifest(`"upgradescope/custom/x"`)
			write(t, dir, name, string(rawtar.Tarball(t, append([]rawtar.Entry{manifest}, entries...)...)))
			return name
		}
	}
	sparse := func(format string) func(*testing.T, string) string {
		return bundleOf("sparse.tar.gz", rawtar.SparseEntry(format, "upgradescope/custom/x/data.json", 4*tib))
	}
	declared := bundleOf("big.tar.gz", rawtar.Entry{Name: "upgradescope/custom/x/data.json", Type: '0', Size: 200 << 30})
	fifo := func(t *testing.T, dir string) string {
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.tar.gz"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "fifo.tar.gz"
	}
	linkToFIFO := func(t *testing.T, dir string) string {
		fifo(t, dir)
		if err := os.Symlink("fifo.tar.gz", filepath.Join(dir, "link.tar.gz")); err != nil {
			t.Fatal(err)
		}
		return "link.tar.gz"
	}
	inspect := func(file func(*testing.T, string) string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string { return []string{"bundle", "inspect", file(t, dir)} }
	}
	verify := func(file func(*testing.T, string) string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			_, public := bundletest.Keys(t, dir)
			return []string{"bundle", "verify", file(t, dir), "--verification-key", public}
		}
	}
	scan := func(file func(*testing.T, string) string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			return scanOf(map[string]string{"a.yaml": removedIngress}, "--bundle", file(t, dir))(t, dir)
		}
	}
	var cases []hostile
	for _, format := range rawtar.SparseFormats {
		cases = append(cases,
			hostile{name: "bundle inspect of a 4 TiB sparse entry in " + format + " format",
				args: inspect(sparse(format)), code: 1,
				want: []string{"sparse.tar.gz", `"upgradescope/custom/x/data.json" is a sparse file`}},
			hostile{name: "scan --bundle of a 4 TiB sparse entry in " + format + " format",
				args: scan(sparse(format)), code: 1,
				want: []string{"bundle sparse.tar.gz", `"upgradescope/custom/x/data.json" is a sparse file`}},
		)
	}
	cases = append(cases,
		hostile{name: "bundle verify of a 4 TiB sparse entry", args: verify(sparse(rawtar.OldGNU)), code: 1,
			want: []string{"sparse.tar.gz", "is a sparse file (GNU 'S')"}, absent: []string{"signature verified"}},
		hostile{name: "bundle verify of a GNU PAX sparse entry", args: verify(sparse(rawtar.PAX10)), code: 1,
			want: []string{"sparse.tar.gz", "is a sparse file (GNU PAX sparse headers)"}, absent: []string{"signature verified"}},
		hostile{name: "bundle inspect of an entry declaring 200 GiB", args: inspect(declared), code: 1,
			want: []string{"big.tar.gz", `bundle too large: unpacks to more than 64 MiB: "upgradescope/custom/x/data.json" declares 214748364800 bytes`}},
		hostile{name: "scan --bundle of an entry declaring 200 GiB", args: scan(declared), code: 1,
			want: []string{"bundle big.tar.gz", "declares 214748364800 bytes"}},
		hostile{name: "bundle verify of an entry declaring 200 GiB", args: verify(declared), code: 1,
			want: []string{"big.tar.gz", "declares 214748364800 bytes"}},
		hostile{name: "scan --bundle of a bundle holding a symbolic link",
			args: scan(bundleOf("link.tar.gz", rawtar.Entry{Name: "upgradescope/custom/x/x.rego", Type: '2'})), code: 1,
			want: []string{"bundle link.tar.gz", `"upgradescope/custom/x/x.rego" is a symbolic link; a bundle holds only regular files and directories`}},
		hostile{name: "bundle inspect of a bundle holding a device",
			args: inspect(bundleOf("dev.tar.gz", rawtar.Entry{Name: "upgradescope/custom/x/data.json", Type: '3'})), code: 1,
			want: []string{"dev.tar.gz", "is a device"}},
		hostile{name: "scan --bundle of a FIFO", args: scan(fifo), code: 1,
			want: []string{"bundle fifo.tar.gz: not a regular file"}},
		hostile{name: "scan --bundle of a link to a FIFO", args: scan(linkToFIFO), code: 1,
			want: []string{"bundle link.tar.gz: not a regular file"}},
		hostile{name: "bundle inspect of a FIFO", args: inspect(fifo), code: 1,
			want: []string{"fifo.tar.gz: not a regular file"}},
		hostile{name: "bundle verify of a link to a FIFO", args: verify(linkToFIFO), code: 1,
			want: []string{"link.tar.gz: not a regular file"}},
		hostile{name: "scan --policy of a FIFO", code: 1,
			args: func(t *testing.T, dir string) []string {
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--policy", fifo(t, dir))(t, dir)
			},
			want: []string{"read policy fifo.tar.gz", "not a regular file"}},
	)
	runHostile(t, cases)
}

// Issue 30, item 10: bundle serve answers 404 for a FIFO in its directory, or a link to one,
// without opening it. Each request used to park an OS thread in open(2) for good (121
// requests, 118 threads; Go aborts at 10,000). A bounded number of requests all end, the
// FIFO has no reader afterwards, the process holds no thread per request, and a real bundle
// beside the FIFO is still served.
func TestBundleServeNeverOpensAFIFO(t *testing.T) {
	buildBinary(t)
	dir := t.TempDir()
	write(t, dir, "ok.tar.gz", "a bundle")
	fifo := filepath.Join(dir, "pipe.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.tar.gz", filepath.Join(dir, "link.tar.gz")); err != nil {
		t.Fatal(err)
	}
	cmd, url := bundleServeProc(t, dir)

	const requests = 60
	statuses := make(chan string, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			name := []string{"pipe.tar.gz", "link.tar.gz"}[i%2]
			statuses <- fmt.Sprintf("%s %d", name, statusWithin(url+"/"+name, i%3 == 0))
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if !strings.HasSuffix(s, " 404") {
			t.Errorf("GET %s, want 404", s)
		}
	}
	if got := statusWithin(url+"/ok.tar.gz", false); got != http.StatusOK {
		t.Errorf("GET ok.tar.gz beside the FIFO: %d, want 200", got)
	}
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
		t.Error("the FIFO has a reader: bundle serve opened it")
	}
	n := threads(t, cmd.Process.Pid)
	t.Logf("%d threads after %d requests", n, requests)
	if n >= requests/2 {
		t.Errorf("bundle serve holds %d threads after %d requests on a FIFO, want far fewer", n, requests)
	}
	peak := peakRSSOf(t, cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t.Logf("peak RSS %d MiB, CPU %s", peak>>20, cpu.Round(time.Millisecond))
	if peak > maxHostileRSS || cpu > maxHostileCPU {
		t.Errorf("bundle serve: peak RSS %d MiB, CPU %s; want under %d MiB and %s", peak>>20, cpu, maxHostileRSS>>20, maxHostileCPU)
	}
}

// The fleet server's --publish-dir holding a FIFO: serve starts (its first look at the
// directory used to wait on the FIFO before it listened), says what it refused, serves
// the signed kb beside it and answers 404 for the FIFO.
func TestServePublishDirWithAFIFOStartsAndServesTheRest(t *testing.T) {
	dir, publish := t.TempDir(), t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	bundletest.Publish(t, filepath.Join(publish, "kb.tar.gz"), bundletest.KB(t, private, "2027-01-05.1", "1.37"))
	if err := syscall.Mkfifo(filepath.Join(publish, "pipe.tar.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ingest = "fifo-publish-ingest-token-0123456789"
	tokenFile := writeSecret(t, dir, "ingest", ingest)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--ingest-token-file", tokenFile, "--publish-dir", publish,
		"--verification-key", public)
	get := func(name string) int {
		req, _ := http.NewRequest(http.MethodGet, p.url+"/bundles/"+name, nil)
		req.Header.Set("Authorization", "Bearer "+ingest)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatalf("GET /bundles/%s: %v", name, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 10 {
		if got := get("pipe.tar.gz"); got != http.StatusNotFound {
			t.Fatalf("GET /bundles/pipe.tar.gz = %d, want 404", got)
		}
	}
	if got := get("kb.tar.gz"); got != http.StatusOK {
		t.Errorf("GET /bundles/kb.tar.gz beside the FIFO = %d, want 200", got)
	}
	if logs := p.logs.String(); !strings.Contains(logs, "pipe.tar.gz: not a regular file") {
		t.Errorf("serve did not say it refused the FIFO:\n%s", logs)
	}
}

// bundleServeProc runs bundle serve on dir on a free loopback port, as startBundleServe does,
// and answers the process too, for its threads and its use; it is killed when the test ends.
func bundleServeProc(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(agentBin, "bundle", "serve", dir, "--listen", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("bundle serve said %q (%v)", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	return cmd, m[1]
}

// statusWithin GETs url, as a long poll when poll is set, and answers its status; 0 when the
// request failed, as one on a server that hangs does when the client gives up (the timeout
// only ends a hang so the test fails rather than waits).
func statusWithin(url string, poll bool) int {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if poll {
		req.Header.Set("If-None-Match", "*")
		req.Header.Set("Prefer", "wait=30")
	}
	resp, err := (&http.Client{Timeout: hangAfter}).Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// threads is the number of OS threads of process pid (/proc/PID/status).
func threads(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				t.Fatalf("Threads line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no Threads in /proc/%d/status", pid)
	return 0
}
