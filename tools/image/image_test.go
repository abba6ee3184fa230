package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const testRepository = "ghcr.io/upgradescope/upgradescope"

var (
	archiveOnce sync.Once
	archivePath string
	archiveErr  error
)

// sharedArchive runs the command as make image does, on the binary the release archive
// ships, and returns the archive's path.
func sharedArchive(t *testing.T) string {
	t.Helper()
	bin := distBinary(t)
	archiveOnce.Do(func() {
		dir := filepath.Dir(sharedDist(t)) // removed with the dist by TestMain
		binPath := filepath.Join(dir, "upgradescope")
		if archiveErr = os.WriteFile(binPath, bin, 0o755); archiveErr != nil {
			return
		}
		archivePath = filepath.Join(dir, "image.tar")
		var stderr bytes.Buffer
		if run(imageArgs(binPath, archivePath), &stderr) != 0 {
			archiveErr = &buildError{stderr.String()}
		}
	})
	if archiveErr != nil {
		t.Fatal(archiveErr)
	}
	return archivePath
}

type buildError struct{ msg string }

func (e *buildError) Error() string { return "image: " + e.msg }

func imageArgs(binary, out string) []string {
	return []string{"-binary", binary, "-platform", "linux/amd64", "-out", out,
		"-version", testVersion, "-revision", testCommit, "-source-date-epoch", testEpoch,
		"-repository", testRepository}
}

// loadImage reads the archive back the way `docker load` finds it: by its tag.
func loadImage(t *testing.T) v1.Image {
	t.Helper()
	tag, err := name.NewTag(testRepository + ":" + testVersion)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(sharedArchive(t), &tag)
	if err != nil {
		t.Fatalf("read the archive back by its tag: %v", err)
	}
	return img
}

func TestImageConfigRunsTheBinaryAsNonrootWithOCILabels(t *testing.T) {
	cf, err := loadImage(t).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	if !cf.Created.Time.Equal(epochTime(t)) {
		t.Errorf("created %v, want SOURCE_DATE_EPOCH %v", cf.Created.Time, epochTime(t))
	}
	c := cf.Config
	if c.User != "65532:65532" || !reflect.DeepEqual(c.Entrypoint, []string{"/upgradescope"}) || c.WorkingDir != "/home/nonroot" {
		t.Errorf("user %q entrypoint %q workdir %q; want 65532:65532, [/upgradescope], /home/nonroot", c.User, c.Entrypoint, c.WorkingDir)
	}
	want := map[string]string{
		"org.opencontainers.image.title":    "upgradescope",
		"org.opencontainers.image.source":   "https://github.com/upgradescope/upgradescope",
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testCommit,
		"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if !reflect.DeepEqual(c.Labels, want) {
		t.Errorf("labels %v, want %v", c.Labels, want)
	}
}

// imageFiles is every entry of every layer, by path, as the container sees it (later
// layers win, though no two layers share a path).
func imageFiles(t *testing.T) map[string]tarEntry {
	t.Helper()
	filesOnce.Do(func() { cachedFiles = readImageFiles(t) })
	if cachedFiles == nil {
		t.Fatal("reading the image's files failed in an earlier test")
	}
	return cachedFiles
}

var (
	filesOnce   sync.Once
	cachedFiles map[string]tarEntry // read once: each read decompresses 60 MB
)

func readImageFiles(t *testing.T) map[string]tarEntry {
	t.Helper()
	layers, err := loadImage(t).Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]tarEntry{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range readTar(t, rc) {
			files[e.hdr.Name] = e
		}
		rc.Close()
	}
	return files
}

func TestImageHoldsTheBinaryCABundleAndUsersAndNoShell(t *testing.T) {
	files := imageFiles(t)
	want := []string{"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/",
		"etc/ssl/certs/ca-certificates.crt", "home/", "home/nonroot/", "tmp/", "upgradescope"}
	// An exact list: no /bin/sh, no busybox, nothing a shell could be.
	if got := sortedKeys(files); !reflect.DeepEqual(got, want) {
		t.Fatalf("image files %v, want %v", got, want)
	}
	bin := files["upgradescope"]
	if bin.hdr.Mode != 0o755 || !bytes.Equal(bin.data, distBinary(t)) {
		t.Errorf("/upgradescope: mode %o, same bytes as the release archive %v; want 755 and true", bin.hdr.Mode, bytes.Equal(bin.data, distBinary(t)))
	}
	if !x509.NewCertPool().AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"].data) {
		t.Error("the CA bundle holds no certificate")
	}
	if !strings.Contains(string(files["etc/passwd"].data), "\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n") {
		t.Errorf("/etc/passwd has no nonroot 65532:\n%s", files["etc/passwd"].data)
	}
	if !strings.Contains(string(files["etc/group"].data), "\nnonroot:x:65532:\n") {
		t.Errorf("/etc/group has no nonroot 65532:\n%s", files["etc/group"].data)
	}
}

func TestImageLayersAreOwnedByRootAtTheCommitTimeButTheNonrootHome(t *testing.T) {
	for path, e := range imageFiles(t) {
		wantID := 0
		if path == "home/nonroot/" {
			wantID = nonrootUID
		}
		if e.hdr.Uid != wantID || e.hdr.Gid != wantID || e.hdr.Uname != "" || e.hdr.Gname != "" {
			t.Errorf("%s: owner %d:%d (%q:%q), want %d:%d without names", path, e.hdr.Uid, e.hdr.Gid, e.hdr.Uname, e.hdr.Gname, wantID, wantID)
		}
		if !e.hdr.ModTime.Equal(epochTime(t)) {
			t.Errorf("%s: mtime %v, want %v", path, e.hdr.ModTime, epochTime(t))
		}
	}
}

// As root (CI), the binary runs as the image would run it: chrooted into the layers'
// files, as 65532, so it needs nothing the image does not hold. Elsewhere it runs as is.
func TestImageBinaryPrintsTheStampedVersion(t *testing.T) {
	root := t.TempDir()
	extractImage(t, imageFiles(t), root)
	cmd := exec.Command(filepath.Join(root, "upgradescope"), "version")
	if os.Geteuid() == 0 {
		cmd = exec.Command("/upgradescope", "version")
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: nonrootUID, Gid: nonrootUID}}
	} else {
		t.Log("not root: running the binary outside the image's files")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("upgradescope version: %v\n%s", err, out)
	}
	for _, want := range []string{"upgradescope " + testVersion + "\n", "commit:     " + testCommit + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("upgradescope version printed\n%s\nwant a line %q", out, want)
		}
	}
}

// extractImage writes the layers' entries under root with their modes, and as root their
// owners too.
func extractImage(t *testing.T, files map[string]tarEntry, root string) {
	t.Helper()
	for _, p := range sortedKeys(files) {
		e, dst := files[p], filepath.Join(root, p)
		mode := os.FileMode(e.hdr.Mode).Perm()
		if e.hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		var err error
		if e.hdr.Typeflag == tar.TypeDir {
			err = os.MkdirAll(dst, 0o700)
		} else {
			err = os.WriteFile(dst, e.data, 0o600)
		}
		if err == nil {
			err = os.Chmod(dst, mode)
		}
		if err == nil && os.Geteuid() == 0 {
			err = os.Chown(dst, e.hdr.Uid, e.hdr.Gid)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestImageBuiltTwiceFromTheSameInputsHasTheSameDigest(t *testing.T) {
	second := filepath.Join(t.TempDir(), "image.tar")
	binPath := filepath.Join(filepath.Dir(sharedArchive(t)), "upgradescope")
	var stderr bytes.Buffer
	if run(imageArgs(binPath, second), &stderr) != 0 {
		t.Fatalf("second build: %s", stderr.String())
	}
	a, err := os.ReadFile(sharedArchive(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the image archive from the same inputs differ")
	}
}

// The Dockerfile cannot be built here (no Docker engine), so this holds it to the image
// tools/image builds: same build script, base with the same user, same config and labels.
func TestDockerfileBuildsWhatMakeImageBuilds(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"FROM --platform=$BUILDPLATFORM golang:1.26 AS build\n",
		"hack/build-static.sh /out/upgradescope\n",
		"FROM gcr.io/distroless/static-debian12:nonroot\n",
		"COPY --from=build /out/upgradescope /upgradescope\n",
		"USER 65532:65532\n",
		"WORKDIR " + nonrootHome + "\n",
		`ENTRYPOINT ["/upgradescope"]` + "\n",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile has no line %q", want)
		}
	}
	s := spec{source: "https://github.com/upgradescope/upgradescope", licenses: "Apache-2.0", version: "$VERSION", revision: "$COMMIT"}
	for k, v := range labels(s) {
		if k == "org.opencontainers.image.created" {
			continue // docker build sets its own
		}
		if !strings.Contains(df, k+"="+v) {
			t.Errorf("Dockerfile does not label %s=%s", k, v)
		}
	}
}
