package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The release the tests build: one platform, stamped like a tagged release.
const (
	testVersion = "v0.0.0-releasetest"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testEpoch   = "1700000000"
)

var (
	distOnce sync.Once
	distDir  string
	distErr  error
	distRoot string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if distRoot != "" {
		os.RemoveAll(distRoot)
	}
	os.Exit(code)
}

// sharedDist runs hack/dist.sh for linux/amd64 once for every test of the package: the
// build is the slow part, and the image is made from the binary a release ships.
func sharedDist(t *testing.T) string {
	t.Helper()
	distOnce.Do(func() {
		distRoot, distErr = os.MkdirTemp("", "upgradescope-dist-")
		if distErr == nil {
			distDir = filepath.Join(distRoot, "dist")
			distErr = runDist(distDir)
		}
	})
	if distErr != nil {
		t.Fatal(distErr)
	}
	return distDir
}

// runDist runs the script make dist runs, for the one platform this machine can execute.
func runDist(dir string) error {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return fmt.Errorf("the release tests build linux/amd64 and run it: this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cmd := exec.Command("../../hack/dist.sh")
	cmd.Env = append(os.Environ(),
		"DIST_DIR="+dir, "PLATFORMS=linux/amd64", "VERSION="+testVersion,
		"COMMIT="+testCommit, "SOURCE_DATE_EPOCH="+testEpoch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hack/dist.sh: %v\n%s", err, out)
	}
	return nil
}

func TestDistBuildsOnePlatformToIdenticalBytesTwice(t *testing.T) {
	first := sharedDist(t)
	second := filepath.Join(t.TempDir(), "dist")
	if err := runDist(second); err != nil {
		t.Fatal(err)
	}
	a, b := dirFiles(t, first), dirFiles(t, second)
	if fmt.Sprint(sortedKeys(a)) != fmt.Sprint(sortedKeys(b)) {
		t.Fatalf("the two builds wrote different files: %v and %v", sortedKeys(a), sortedKeys(b))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two builds of the same commit", name)
		}
	}
}

func TestDistWritesTheArchiveTheSBOMAndSumsThatVerify(t *testing.T) {
	dir := sharedDist(t)
	want := []string{
		"SHA256SUMS",
		"upgradescope_" + testVersion + ".cdx.json",
		"upgradescope_" + testVersion + "_linux_amd64.tar.gz",
	}
	if got := sortedKeys(dirFiles(t, dir)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dist holds %v, want %v", got, want)
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum --check SHA256SUMS: %v\n%s", err, out)
	}
}

// The SBOM names the release, its license and the modules its binary links, read from the
// binary.
func TestDistSBOMIsCycloneDXOfTheModulesTheBinaryLinks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(sharedDist(t), "upgradescope_"+testVersion+".cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct {
				Name, Version string
				Licenses      []struct {
					License struct{ ID string } `json:"license"`
				} `json:"licenses"`
			} `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("the SBOM is not JSON: %v", err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/upgradescope/upgradescope" || bom.Metadata.Component.Version != testVersion {
		t.Errorf("SBOM format %q describes %s %s, want CycloneDX of github.com/upgradescope/upgradescope %s",
			bom.BOMFormat, bom.Metadata.Component.Name, bom.Metadata.Component.Version, testVersion)
	}
	// Our own component carries LICENSE's identifier, not NOASSERTION.
	if l := bom.Metadata.Component.Licenses; len(l) != 1 || l[0].License.ID != "Apache-2.0" {
		t.Errorf("SBOM component licenses %+v, want one: Apache-2.0", l)
	}
	linked := map[string]bool{}
	for _, c := range bom.Components {
		linked[c.Name] = true
	}
	// OPA is linked; go-containerregistry is only tools/image's and must not be listed.
	if !linked["github.com/open-policy-agent/opa"] || linked["github.com/google/go-containerregistry"] {
		t.Errorf("SBOM lists OPA %v (want true) and go-containerregistry %v (want false)",
			linked["github.com/open-policy-agent/opa"], linked["github.com/google/go-containerregistry"])
	}
}

func TestDistArchiveHoldsTheBinaryAndTheLicenseOwnedByRootAtTheCommitTime(t *testing.T) {
	entries := readTarGz(t, filepath.Join(sharedDist(t), "upgradescope_"+testVersion+"_linux_amd64.tar.gz"))
	if got := names(entries); !slices.Equal(got, []string{"LICENSE", "upgradescope"}) {
		t.Fatalf("archive holds %v, want LICENSE and upgradescope", got)
	}
	license, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(entries[0].data, license) {
		t.Error("the archive's LICENSE is not the repository's")
	}
	for i, mode := range []int64{0o644, 0o755} {
		h := entries[i].hdr
		if h.Mode != mode || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(epochTime(t)) {
			t.Errorf("%s: mode %o uid %d gid %d uname %q mtime %v; want %o, 0, 0, none, %v",
				h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.ModTime, mode, epochTime(t))
		}
	}
}

// distBinary is the linux/amd64 binary from the shared release archive.
func distBinary(t *testing.T) []byte {
	t.Helper()
	for _, e := range readTarGz(t, filepath.Join(sharedDist(t), "upgradescope_"+testVersion+"_linux_amd64.tar.gz")) {
		if e.hdr.Name == "upgradescope" {
			return e.data
		}
	}
	t.Fatal("the release archive holds no upgradescope")
	return nil
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readTarGz(t *testing.T, path string) []tarEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return readTar(t, zr)
}

func readTar(t *testing.T, r io.Reader) []tarEntry {
	t.Helper()
	var out []tarEntry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{hdr: h, data: data})
	}
}

func names(entries []tarEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.hdr.Name)
	}
	return out
}

func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func epochTime(t *testing.T) time.Time {
	t.Helper()
	tm, err := parseEpoch(testEpoch)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestDistRefusesBadInputBeforeBuilding: a platform without a release or a time that is
// not seconds stops the script with a message naming it, before anything is built.
func TestDistRefusesBadInputBeforeBuilding(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"a platform without its architecture", "PLATFORMS=linux", `PLATFORMS entry "linux" is not one of`},
		{"a platform releases do not cover", "PLATFORMS=windows/amd64", `PLATFORMS entry "windows/amd64" is not one of`},
		{"a SOURCE_DATE_EPOCH that is a date", "SOURCE_DATE_EPOCH=2026-12-01", `SOURCE_DATE_EPOCH "2026-12-01" is not whole seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dist")
			cmd := exec.Command("../../hack/dist.sh")
			cmd.Env = append(os.Environ(), "DIST_DIR="+dir, "PLATFORMS=linux/amd64",
				"VERSION="+testVersion, "COMMIT="+testCommit, "SOURCE_DATE_EPOCH="+testEpoch, tt.env)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("hack/dist.sh succeeded with %s:\n%s", tt.env, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("hack/dist.sh said %q, want %q", out, tt.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("hack/dist.sh created %s before refusing (%v)", dir, err)
			}
		})
	}
}
