package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestImageRefusesBadInputNamingWhatIsWrong: each row breaks one input of a build that
// would otherwise succeed; the command exits 1, says why, and writes no archive.
func TestImageRefusesBadInputNamingWhatIsWrong(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the rows use this test binary as a linux/amd64 executable")
	}
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	notELF := filepath.Join(dir, "script")
	noCerts := filepath.Join(dir, "empty.pem")
	for _, f := range []string{notELF, noCerts} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "image.tar")
	base := []string{"-binary", self, "-out", out, "-source-date-epoch", "1700000000"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a binary that is not an executable", []string{"-binary", notELF}, "binary is not a Linux executable"},
		{"a binary for another architecture", []string{"-platform", "linux/arm64"}, "binary is built for EM_X86_64, not for linux/arm64"},
		{"a platform other than linux", []string{"-platform", "darwin/amd64"}, "only linux images are built"},
		{"an architecture without a release", []string{"-platform", "linux/s390x"}, "architecture must be amd64 or arm64"},
		{"a CA bundle without certificates", []string{"-ca-bundle", noCerts}, "CA bundle holds no PEM certificate"},
		{"a missing CA bundle", []string{"-ca-bundle", filepath.Join(dir, "nope.pem")}, "read CA bundle (install Debian's ca-certificates"},
		{"no SOURCE_DATE_EPOCH", []string{"-source-date-epoch", ""}, "-source-date-epoch or SOURCE_DATE_EPOCH is required"},
		{"a SOURCE_DATE_EPOCH that is not seconds", []string{"-source-date-epoch", "2026-12-01"}, `-source-date-epoch "2026-12-01": want whole seconds`},
		{"a version no tag can carry", []string{"-version", "v1.0.0+build"}, `-version "v1.0.0+build" make no valid image tag`},
		{"no output path", []string{"-out", ""}, "-binary and -out are required"},
		{"a stray argument", []string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			// A later flag wins, so each row overrides one of base.
			if code := run(append(append([]string{}, base...), tt.args...), &stderr); code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("an archive was written (%v)", err)
			}
		})
	}
}
