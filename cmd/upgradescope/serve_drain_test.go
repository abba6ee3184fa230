package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM while a push's body is still arriving: the server stops listening but lets the push
// finish (202) and then exits 0, within --drain.
func TestServeDrainsAPushInFlightOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	const token = "drain-ingest-token"
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--drain", "20s",
		"--ingest-token-file", writeSecret(t, dir, "ingest", token))
	body := variedEnvelope(t, "drain", "5a1d0000-0000-4000-8000-000000000001", "")

	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(p.url, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	// Expect: 100-continue makes the server say when its handler starts to read the body: a
	// signal sent before the server accepted the connection would find it still in the
	// listen queue, which closing the listener resets.
	head := fmt.Sprintf("POST /api/v1/snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", token, len(body))
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewReader(conn)
	cont, err := http.ReadResponse(answers, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v %v, want 100 Continue", cont, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	// The body in ten pieces over about two seconds, all of it after the signal.
	const pieces = 10
	size := (len(body) + pieces - 1) / pieces
	for i := 0; i < len(body); i += size {
		time.Sleep(200 * time.Millisecond) // the slowness is the point of the test
		if _, err := conn.Write(body[i:min(i+size, len(body))]); err != nil {
			t.Fatalf("writing the body after SIGTERM: %v", err)
		}
	}
	resp, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("reading the answer to the push in flight: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("push in flight during the drain: %d, want 202", resp.StatusCode)
	}
	select {
	case <-p.done:
	case <-time.After(25 * time.Second):
		t.Fatal("serve still ran 25 s after SIGTERM with a 20 s drain")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after a clean drain, want 0", code)
	}
	t.Logf("exited %s after SIGTERM", time.Since(signalled).Round(time.Millisecond))
	if statusOf(p.url, "/healthz") != 0 {
		t.Errorf("the address still answers after the exit")
	}
}
