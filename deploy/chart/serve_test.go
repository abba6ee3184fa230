package chart

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverArgs are the server container's args of a render, with the pod's paths moved into
// dir and its listener onto a loopback port: what the Deployment runs, on this machine.
func serverArgs(t *testing.T, rendered, dir, addr string) []string {
	t.Helper()
	var out []string
	for _, a := range containerArgs(t, rendered)["server"] {
		switch {
		case strings.HasPrefix(a, "--listen="):
			a = "--listen=" + addr
		case strings.HasPrefix(a, "--db="):
			a = "--db=" + filepath.Join(dir, "upgradescope.db")
		default:
			a = strings.Replace(a, "/etc/upgradescope/", dir+"/", 1)
		}
		out = append(out, a)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The agent-plus-server render has no read token: the server it starts answers probes and
// refuses reads until one is minted.
func TestTheServerStartsWithTheChartsArgsAndRefusesReadsWithoutAReadToken(t *testing.T) {
	var golden string
	for _, g := range goldens {
		if g.name == "agent-plus-server" {
			golden = g.values
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens", "ingestToken"), []byte("ingest-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var logs syncBuffer
	cmd := exec.Command(binary(t), serverArgs(t, render(t, values(t, golden)), dir, addr)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	// A bound on start-up, not a timing assertion.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if code, err := status(base + "/readyz"); err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never answered /readyz")
		}
	}
	for path, want := range map[string]int{"/healthz": 200, "/api/v1/clusters": 401, "/metrics": 401} {
		if code, err := status(base + path); err != nil || code != want {
			t.Errorf("GET %s = %d, %v; want %d", path, code, err, want)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "upgradescope.db")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("database file: %v, %v; want it created 0600", info, err)
	}
}

func status(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
