package main

import (
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// --bundle-timeout bounds a --bundle URL fetch as a whole: a server trickling a byte at a time
// fails the command with the deadline named, not keeps it running.
func TestBundleTimeoutEndsAFetchFromATricklingServer(t *testing.T) {
	srv := bundletest.Trickle(t)
	_, public := bundletest.Keys(t, t.TempDir())
	for _, cmd := range []string{"version", "scan"} {
		args := []string{cmd, "--bundle", srv.URL + "/kb.tar.gz", "--verification-key", public, "--bundle-timeout", "300ms"}
		if cmd == "scan" {
			args = append(args, "--files", examples, "--target", "1.33")
		}
		r := runCLI(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "/kb.tar.gz: no bundle within 300ms") {
			t.Errorf("%s: exit %d, stderr %q; want 1 and the deadline named", cmd, r.code, r.stderr)
		}
	}
	if r := runCLI(t, "version", "--bundle", srv.URL+"/kb.tar.gz", "--verification-key", public, "--bundle-timeout", "0s"); r.code == 0 || !strings.Contains(r.stderr, "--bundle-timeout 0s") {
		t.Errorf("--bundle-timeout 0s: exit %d, %q", r.code, r.stderr)
	}
}
