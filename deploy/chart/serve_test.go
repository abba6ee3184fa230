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

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"

	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
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

// startServer runs the server container of a render on this machine (serverArgs) and
// answers its base URL once /readyz says ready.
func startServer(t *testing.T, rendered, dir string) string {
	t.Helper()
	addr := freeAddr(t)
	var logs syncbuf.Buffer
	cmd := exec.Command(binary(t), serverArgs(t, rendered, dir, addr)...)
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
		if code, err := status(base+"/readyz", ""); err == nil && code == http.StatusOK {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never answered /readyz")
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func goldenValues(name string) string {
	for _, g := range goldens {
		if g.name == name {
			return g.values
		}
	}
	panic("no golden " + name)
}

// The agent-plus-server render has no read token: the server it starts answers probes and
// refuses reads until one is minted.
func TestTheServerStartsWithTheChartsArgsAndRefusesReadsWithoutAReadToken(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"tokens/ingestToken": "ingest-token-0123456789"})
	base := startServer(t, render(t, values(t, goldenValues("agent-plus-server"))), dir)
	for path, want := range map[string]int{"/healthz": 200, "/api/v1/clusters": 401, "/metrics": 401} {
		if code, err := status(base+path, ""); err != nil || code != want {
			t.Errorf("GET %s = %d, %v; want %d", path, code, err, want)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "upgradescope.db")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("database file: %v, %v; want it created 0600", info, err)
	}
}

// The hub render runs on PostgreSQL, from the URL in the database Secret, and reads with the
// read token from the token Secret: what the ServiceMonitor scrapes with.
func TestTheHubServerRunsOnPostgreSQLAndReadsWithItsReadToken(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"db/url":             pgtest.URL(t),
		"tokens/ingestToken": "ingest-token-0123456789",
		"tokens/readToken":   "read-token-0123456789",
		"tokens/adminToken":  "admin-token-0123456789",
	})
	base := startServer(t, render(t, values(t, hubValues)), dir)
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/api/v1/clusters", "", 401},
		{"/api/v1/clusters", "read-token-0123456789", 200},
		{"/metrics", "read-token-0123456789", 200},
		{"/api/v1/clusters", "ingest-token-0123456789", 401},
	} {
		if code, err := status(base+c.path, c.token); err != nil || code != c.want {
			t.Errorf("GET %s with %q = %d, %v; want %d", c.path, c.token, code, err, c.want)
		}
	}
}

func status(url, token string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
