package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The release the install tests publish on loopback: a tag, built as make dist builds it.
const ciReleaseVersion = "v0.0.0-citest"

// ciRelease builds the release archive and SHA256SUMS for this machine's platform with
// hack/dist.sh into dir, as <dir>/<version>/<files>: the layout of a GitHub release's
// download URLs.
func ciRelease(t *testing.T, dir string) string {
	t.Helper()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if !slices.Contains([]string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}, platform) {
		t.Skipf("make dist builds no archive for %s", platform)
	}
	out := filepath.Join(dir, ciReleaseVersion)
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "dist.sh"))
	cmd.Env = append(os.Environ(), "DIST_DIR="+out, "PLATFORMS="+platform, "SBOM=0",
		"VERSION="+ciReleaseVersion, "COMMIT="+builtCommit, "SOURCE_DATE_EPOCH=1700000000")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/dist.sh: %v\n%s", err, b)
	}
	return out
}

func ciArchiveName() string {
	return fmt.Sprintf("upgradescope_%s_%s_%s.tar.gz", ciReleaseVersion, runtime.GOOS, runtime.GOARCH)
}

// publishVariants lays out under root one release per way it can go wrong: good (as built),
// tampered (one byte of the archive changed, SHA256SUMS as built) and unlisted (SHA256SUMS
// with a line for another archive only).
func publishVariants(t *testing.T, root, built string) {
	t.Helper()
	archive, err := os.ReadFile(filepath.Join(built, ciArchiveName()))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(built, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := slices.Clone(archive)
	tampered[len(tampered)/2] ^= 0xff
	other := strings.Replace(string(sums), ciArchiveName(), "upgradescope_"+ciReleaseVersion+"_plan9_amd64.tar.gz", 1)
	for variant, files := range map[string]map[string][]byte{
		"good":     {ciArchiveName(): archive, "SHA256SUMS": sums},
		"tampered": {ciArchiveName(): tampered, "SHA256SUMS": sums},
		"unlisted": {ciArchiveName(): archive, "SHA256SUMS": []byte(other)},
	} {
		dir := filepath.Join(root, variant, ciReleaseVersion)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// releaseServer serves root on loopback and records the paths asked for.
type releaseServer struct {
	*httptest.Server
	mu    sync.Mutex
	asked []string
}

func newReleaseServer(t *testing.T, root string) *releaseServer {
	t.Helper()
	s := &releaseServer{}
	files := http.FileServer(http.Dir(root))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asked = append(s.asked, r.URL.Path)
		s.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// take answers the paths asked for since the last call.
func (s *releaseServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	asked := s.asked
	s.asked = nil
	return asked
}

// fakeGo writes a go on PATH that stands in for go install, which needs the network: it
// records its command line and GOBIN, and installs the binary the tests built. It answers
// the directory to put first on PATH and the record's path.
func fakeGo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "go-calls")
	script := fmt.Sprintf("#!/bin/sh\nprintf 'GOBIN=%%s go %%s\\n' \"$GOBIN\" \"$*\" >>'%s'\ncp '%s' \"$GOBIN/upgradescope\"\n", record, agentBin)
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, record
}

// TestActionInstallsTheReleaseArchiveItsRefNames runs the action's install against releases
// served on loopback: a release downloads its archive, checked against SHA256SUMS, and runs
// it; a tampered archive or a missing line is refused; a branch, a commit or install: source
// builds with go install (a stand-in records the command line: go install needs the network).
func TestActionInstallsTheReleaseArchiveItsRefNames(t *testing.T) {
	buildBinary(t)
	root := t.TempDir()
	publishVariants(t, root, ciRelease(t, t.TempDir()))
	srv := newReleaseServer(t, root)
	platform := runtime.GOOS + "/" + runtime.GOARCH
	goInstall := func(ref string) string {
		return "go install github.com/upgradescope/upgradescope/cmd/upgradescope@" + ref
	}
	fetched := func(variant string) []string {
		return []string{"/" + variant + "/" + ciReleaseVersion + "/SHA256SUMS", "/" + variant + "/" + ciReleaseVersion + "/" + ciArchiveName()}
	}
	for _, tt := range []struct {
		name    string
		inputs  map[string]string
		code    int
		stderr  []string
		goCall  string // the go install the script ran; empty: go must not run
		fetched []string
	}{
		{
			name:   "a release tag as the Action's ref installs that release's archive",
			inputs: map[string]string{"github.action_ref": ciReleaseVersion, "release-url": srv.URL + "/good"},
			code:   2,
			stderr: []string{
				fmt.Sprintf("upgradescope-ci: installing upgradescope %s (%s) from %s/good/%s, checked against its SHA256SUMS\n", ciReleaseVersion, platform, srv.URL, ciReleaseVersion),
				"upgradescope-ci: installed upgradescope " + ciReleaseVersion + " ",
			},
			fetched: fetched("good"),
		},
		{
			name:    "the version input wins over the Action's ref",
			inputs:  map[string]string{"github.action_ref": "main", "version": ciReleaseVersion, "release-url": srv.URL + "/good/"},
			code:    2,
			stderr:  []string{"upgradescope-ci: installed upgradescope " + ciReleaseVersion + " "},
			fetched: fetched("good"),
		},
		{
			name:    "a tampered archive is refused as a checksum mismatch",
			inputs:  map[string]string{"github.action_ref": ciReleaseVersion, "release-url": srv.URL + "/tampered"},
			code:    1,
			stderr:  []string{fmt.Sprintf("upgradescope-ci: checksum mismatch: %s does not match its line in %s/tampered/%s/SHA256SUMS; refusing to install it\n", ciArchiveName(), srv.URL, ciReleaseVersion)},
			fetched: fetched("tampered"),
		},
		{
			name:    "an archive SHA256SUMS has no line for is refused",
			inputs:  map[string]string{"github.action_ref": ciReleaseVersion, "release-url": srv.URL + "/unlisted"},
			code:    1,
			stderr:  []string{fmt.Sprintf("upgradescope-ci: SHA256SUMS of %s has no line for %s: refusing an archive nothing vouches for\n", ciReleaseVersion, ciArchiveName())},
			fetched: fetched("unlisted"),
		},
		{
			name:    "a version never released names the URL it could not download",
			inputs:  map[string]string{"version": "v9.9.9", "release-url": srv.URL + "/good"},
			code:    1,
			stderr:  []string{"upgradescope-ci: cannot download " + srv.URL + "/good/v9.9.9/SHA256SUMS: is v9.9.9 a release? (install: source builds it with go install)\n"},
			fetched: []string{"/good/v9.9.9/SHA256SUMS"},
		},
		{
			name:   "a branch as the Action's ref builds that branch, not the latest release",
			inputs: map[string]string{"github.action_ref": "main", "release-url": srv.URL + "/good"},
			code:   2,
			stderr: []string{"upgradescope-ci: building upgradescope main from source (main is not a release tag, so no archive is published for it): " + goInstall("main") + "\n"},
			goCall: goInstall("main"),
		},
		{
			name:   "a commit as the Action's ref builds that commit",
			inputs: map[string]string{"github.action_ref": builtCommit, "release-url": srv.URL + "/good"},
			code:   2,
			goCall: goInstall(builtCommit),
		},
		{
			name:   "a pseudo-version builds from source: it was never tagged",
			inputs: map[string]string{"version": "v0.0.0-20260101120000-0123456789ab", "release-url": srv.URL + "/good"},
			code:   2,
			goCall: goInstall("v0.0.0-20260101120000-0123456789ab"),
		},
		{
			name:   "no ref and no version builds latest",
			inputs: map[string]string{"release-url": srv.URL + "/good"},
			code:   2,
			stderr: []string{"(latest is resolved by go install; name a release such as v0.3.0 to download it)"},
			goCall: goInstall("latest"),
		},
		{
			name:   "install source builds even a release",
			inputs: map[string]string{"github.action_ref": ciReleaseVersion, "install": "source", "release-url": srv.URL + "/good"},
			code:   2,
			goCall: goInstall(ciReleaseVersion),
		},
		{
			name:   "install release refuses a branch",
			inputs: map[string]string{"github.action_ref": "main", "install": "release", "release-url": srv.URL + "/good"},
			code:   1,
			stderr: []string{`upgradescope-ci: install release needs a release version such as v0.3.0, not the Action's ref "main": only tags are released` + "\n"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv.take()
			goDir, record := fakeGo(t)
			inputs := map[string]string{"path": "examples/manifests", "target": "1.37"}
			for k, v := range tt.inputs {
				inputs[k] = v
			}
			// No upgradescope on PATH: the one that runs is the one the script installed.
			r := runActionEnv(t, inputs, "PATH="+goDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
				}
			}
			calls, _ := os.ReadFile(record)
			if tt.goCall == "" && len(calls) != 0 {
				t.Errorf("go ran: %s", calls)
			}
			if tt.goCall != "" && !strings.HasSuffix(strings.TrimSpace(string(calls)), " "+tt.goCall) {
				t.Errorf("go calls %q, want one %q", calls, tt.goCall)
			}
			if got := srv.take(); !slices.Equal(got, tt.fetched) {
				t.Errorf("fetched %q, want %q", got, tt.fetched)
			}
			if tt.code == 2 {
				checkActionRun(t, r)
			} else if len(r.outputs) != 0 {
				t.Errorf("a refused install wrote outputs %v", r.outputs)
			}
		})
	}

	t.Run("the GitLab template installs the release archive too", func(t *testing.T) {
		srv.take()
		goDir, record := fakeGo(t)
		job := readGitLabJob(t)
		code, out, work := runGitLabJob(t, job, "PATH="+goDir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"UPGRADESCOPE_VERSION="+ciReleaseVersion, "UPGRADESCOPE_RELEASE_URL="+srv.URL+"/good")
		if code != 2 || !strings.Contains(out, "upgradescope-ci: installed upgradescope "+ciReleaseVersion+" ") {
			t.Fatalf("exit %d, want 2 from the installed %s:\n%s", code, ciReleaseVersion, out)
		}
		if calls, _ := os.ReadFile(record); len(calls) != 0 {
			t.Errorf("go ran: %s", calls)
		}
		if got := srv.take(); !slices.Equal(got, fetched("good")) {
			t.Errorf("fetched %q, want %q", got, fetched("good"))
		}
		checkGitLabReports(t, job, work)
	})
}
