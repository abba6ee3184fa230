package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
	"github.com/upgradescope/upgradescope/internal/testenv/tlstest"
)

const runIngestToken = "run-ingest-token"

// running is a Process serving a real SQLite store on a real loopback listener.
type running struct {
	url   string // as Listening was told it
	addr  string
	store store.Store
	logs  *syncbuf.Buffer
	stop  context.CancelFunc
	done  chan error
}

// startProcess runs a Process on st (a fresh SQLite store when nil) with the built-in
// bundles and an ingest token; edit adjusts it before Run.
func startProcess(t *testing.T, st store.Store, edit func(*server.Process)) *running {
	t.Helper()
	if st == nil {
		st = openSQLite(t)
	}
	set, err := policyset.New(t.Context(), policyset.Base{Options: []engine.Option{engine.WithToolVersion("test")}})
	if err != nil {
		t.Fatalf("bundle set: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &running{addr: ln.Addr().String(), store: st, logs: &syncbuf.Buffer{}, done: make(chan error, 1)}
	listening := make(chan string, 1)
	p := &server.Process{Bundles: set, Drain: 10 * time.Second, Listening: func(url string) { listening <- url },
		Config: server.Config{Store: st, IngestToken: runIngestToken, HostCheck: true,
			Logger: slog.New(slog.NewTextHandler(r.logs, nil))}}
	if edit != nil {
		edit(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- p.Run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
		if t.Failed() {
			t.Logf("process log:\n%s", r.logs)
		}
	})
	select {
	case r.url = <-listening:
	case err := <-r.done:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not serve within a minute")
	}
	return r
}

func openSQLite(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "upgradescope.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// stopped cancels Run's context and answers what Run returned, failing the test when it
// has not returned within wait.
func (r *running) stopped(t *testing.T, wait time.Duration) error {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(wait):
		t.Fatalf("Run still ran %s after its context ended", wait)
		return nil
	}
}

// startPush sends a push's head with Expect: 100-continue and waits for the 100: the
// handler is then running and reading the body, which has not been sent.
func (r *running) startPush(t *testing.T, length int) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Encoding: gzip\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", push.Path, runIngestToken, length)
	answers := bufio.NewReader(conn)
	cont, err := http.ReadResponse(answers, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v %v, want 100 Continue", cont, err)
	}
	return conn, answers
}

func TestRunServesUntilItsContextEndsAndThenLetsGoOfTheAddress(t *testing.T) {
	r := startProcess(t, nil, func(p *server.Process) { p.Config.PathPrefix = "/upgradescope" })
	if want := "http://" + r.addr + "/upgradescope"; r.url != want {
		t.Errorf("Listening was told %q, want %q", r.url, want)
	}
	resp, err := http.Get(r.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", resp.StatusCode)
	}
	if err := r.stopped(t, 10*time.Second); err != nil {
		t.Errorf("Run after a stop: %v, want nil", err)
	}
	for _, line := range []string{"evaluating with", "stopping: draining requests in flight"} {
		if !strings.Contains(r.logs.String(), line) {
			t.Errorf("the log has no %q", line)
		}
	}
	if conn, err := net.DialTimeout("tcp", r.addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still takes connections after Run returned", r.addr)
	}
}

// A push whose body is still arriving when the stop comes is answered and stored before
// Run returns; the listener closes at once.
func TestRunDrainsAPushInFlightBeforeItReturns(t *testing.T) {
	r := startProcess(t, nil, nil)
	body := envelope(t, "drain", teamsInventory(t))
	conn, answers := r.startPush(t, len(body))
	r.stop()
	if !pollFor(5*time.Second, func() bool { return dialFails(r.addr) }) {
		t.Errorf("the listener still takes connections during the drain")
	}
	// The body in five pieces over about a second, all of it after the stop.
	const pieces = 5
	size := (len(body) + pieces - 1) / pieces
	for i := 0; i < len(body); i += size {
		time.Sleep(200 * time.Millisecond) // the slowness is the point of the test
		if _, err := conn.Write(body[i:min(i+size, len(body))]); err != nil {
			t.Fatalf("writing the body after the stop: %v", err)
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
	if err := r.stopped(t, 10*time.Second); err != nil {
		t.Errorf("Run after a drain: %v, want nil", err)
	}
	clusters, err := r.store.Clusters(t.Context())
	if err != nil || len(clusters) != 1 || clusters[0].Name != "drain" {
		t.Errorf("stored after the drain: %+v %v, want the cluster drain", clusters, err)
	}
}

// A request still running when the drain runs out does not hold the stop up: Run logs it
// and returns.
func TestRunReturnsWhenTheDrainRunsOut(t *testing.T) {
	r := startProcess(t, nil, func(p *server.Process) { p.Drain = 300 * time.Millisecond })
	conn, answers := r.startPush(t, 1000) // a body that never comes
	start := time.Now()
	if err := r.stopped(t, 10*time.Second); err != nil {
		t.Errorf("Run after a drain that ran out: %v, want nil (a stop is a stop)", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("Run returned %s after the stop, before its 300ms drain", took)
	}
	if !strings.Contains(r.logs.String(), "requests still running after the drain are cancelled") {
		t.Errorf("the log does not say the drain ran out")
	}
	// What did not finish is cut off, not left running under a store about to close.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := answers.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the push still running after the drain: read %v, want its connection closed", err)
	}
}

// lockHolder is a store whose database-wide lock, which retention takes to prune, is
// held until the caller's context ends and a moment after.
type lockHolder struct {
	store.Store
	entered  chan struct{}
	released atomic.Bool
}

func (l *lockHolder) WithLock(ctx context.Context, _ string, _ func(context.Context) error) (bool, error) {
	select {
	case l.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	time.Sleep(200 * time.Millisecond) // a loop slow to notice the stop
	l.released.Store(true)
	return false, ctx.Err()
}

// Run returns only once its background loops have: the store may be closed after it.
func TestRunStopsItsBackgroundLoopsBeforeItReturns(t *testing.T) {
	st := &lockHolder{Store: openSQLite(t), entered: make(chan struct{}, 1)}
	r := startProcess(t, st, func(p *server.Process) { p.Retention = 24 * time.Hour })
	select {
	case <-st.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the retention loop did not start")
	}
	if err := r.stopped(t, 10*time.Second); err != nil {
		t.Errorf("Run after a stop: %v, want nil", err)
	}
	if !st.released.Load() {
		t.Errorf("Run returned while the retention loop still held the store")
	}
}

// Over TLS the pair is served at TLS 1.2 or newer, a renewed pair is picked up without a
// restart, and a pair that breaks leaves the last good one served.
func TestRunServesTLSAndReloadsARenewedCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := tlstest.NewCA(t)
	ca.WriteLeaf(t, 100, certFile, keyFile)
	r := startProcess(t, nil, func(p *server.Process) { p.TLSCertFile, p.TLSKeyFile = certFile, keyFile })
	if want := "https://" + r.addr; r.url != want {
		t.Errorf("Listening was told %q, want %q", r.url, want)
	}
	if got := tlstest.ServedSerial(r.addr, ca.Pool); got != 100 {
		t.Fatalf("served serial %d, want 100", got)
	}
	old := &tls.Config{RootCAs: ca.Pool, MaxVersion: tls.VersionTLS11}
	if conn, err := tls.Dial("tcp", r.addr, old); err == nil {
		conn.Close()
		t.Errorf("a TLS 1.1 client was served, want the handshake refused")
	}

	// A renewed leaf: the server looks at the files at most once a second, on a handshake.
	ca.WriteLeaf(t, 200, certFile, keyFile)
	if !pollFor(10*time.Second, func() bool { return tlstest.ServedSerial(r.addr, ca.Pool) == 200 }) {
		t.Fatalf("new connections still see serial %d 10 s after the pair was renewed", tlstest.ServedSerial(r.addr, ca.Pool))
	}

	// A broken pair (the certificate file truncated mid-write): the last good one stays.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Past the once-a-second check, several new connections must all still see serial 200.
	for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if got := tlstest.ServedSerial(r.addr, ca.Pool); got != 200 {
			t.Fatalf("after a broken pair was written, a new connection saw serial %d, want the last good 200", got)
		}
	}
	if !pollFor(5*time.Second, func() bool { return strings.Contains(r.logs.String(), "does not load; serving the previous one") }) {
		t.Errorf("the server did not log the broken pair")
	}
}

// A Process that cannot start answers why and lets go of the listener.
func TestRunThatCannotStartClosesTheListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	set, err := policyset.New(t.Context(), policyset.Base{Options: []engine.Option{engine.WithToolVersion("test")}})
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.crt")
	p := &server.Process{Bundles: set, TLSCertFile: missing, TLSKeyFile: missing, Config: server.Config{Store: openSQLite(t)}}
	err = p.Run(t.Context(), ln)
	if err == nil || !strings.Contains(err.Error(), "--tls-cert-file/--tls-key-file") {
		t.Errorf("Run with a missing pair: %v, want the pair named", err)
	}
	if !dialFails(ln.Addr().String()) {
		t.Errorf("the listener still takes connections after Run failed")
	}
}

func dialFails(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
	}
	return err != nil
}

// pollFor calls cond every 50 ms until it answers true or within has passed.
func pollFor(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
