package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// Thirty idle long polls on a 60 MB bundle (issue 13, item 7) cost bundle serve one hash and a
// stat per second, not a read per poll per second: the issue measured about a core and
// 3.5 GiB. Each poll ends 304 after its wait, and the server's peak RSS, the kernel's count
// for the child (an upper bound, see TestAGzipBombStaysBelow256MiB), stays below 256 MiB.
func TestThirtyIdleLongPollsOnA60MBBundleStayBelow256MiB(t *testing.T) {
	buildBinary(t)
	dir := t.TempDir()
	// Sparse: a buffer of 60 MB in this process would count in the child's peak too.
	big, err := os.Create(filepath.Join(dir, "big.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(60 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	cmd := exec.Command(agentBin, "bundle", "serve", dir, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("bundle serve said %q (%v)", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	url := m[1] + "/big.tar.gz"
	head, err := http.Head(url)
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()

	const polls = 30
	status := make(chan int, polls)
	for range polls {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("If-None-Match", head.Header.Get("ETag"))
			req.Header.Set("Prefer", "wait=2")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				status <- 0
				return
			}
			resp.Body.Close()
			status <- resp.StatusCode
		}()
	}
	for range polls {
		if code := <-status; code != http.StatusNotModified {
			t.Errorf("long poll on an unchanged bundle: %d, want 304", code)
		}
	}
	peak := peakRSSOf(t, cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	t.Logf("peak RSS %d MiB", peak>>20)
	if peak > 256<<20 {
		t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
	}
}
