package bundles_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest/rawtar"
)

// The bomb: 34 files of 60 MiB zeros, about 2 MB compressed. Every way in refuses it
// after unpacking at most MaxUnpacked, naming the bound.
func TestAGzipBombIsRefusedByEveryReader(t *testing.T) {
	bomb := bundletest.Bomb(t, 34, 60<<20)
	if len(bomb) > 4<<20 {
		t.Fatalf("the bomb is %d bytes compressed; want a few MB", len(bomb))
	}
	const want = "bundle too large: unpacks to more than 64 MiB"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	_, err := bundles.Read(bytes.NewReader(bomb), nil)
	check("Read", err)
	_, err = bundles.Inspect(bytes.NewReader(bomb))
	check("Inspect", err)

	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	if err := os.WriteFile(path, bomb, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = bundles.Fetch(context.Background(), path, bundles.Remote{}, nil)
	check("Fetch of a file", err)
	if err != nil && !strings.Contains(err.Error(), path) {
		t.Errorf("Fetch of a file: %v does not name %s", err, path)
	}

	_, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(bomb)
	}))
	defer srv.Close()
	_, err = bundles.Fetch(context.Background(), srv.URL+"/bomb.tar.gz", bundles.Remote{}, bundles.VerificationConfig(string(pub), "RS256"))
	check("Fetch of a URL", err)
	if err != nil && !strings.Contains(err.Error(), "/bomb.tar.gz") {
		t.Errorf("Fetch of a URL: %v does not name the URL", err)
	}
}

func TestABundleOfTooManyFilesIsRefused(t *testing.T) {
	_, err := bundles.Read(bytes.NewReader(bundletest.ManyFiles(t, bundles.MaxFiles+1)), nil)
	if err == nil || !strings.Contains(err.Error(), "bundle too large: more than 10000 files") {
		t.Errorf("Read of %d files: %v", bundles.MaxFiles+1, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.json"), make([]byte, bundles.MaxUnpacked+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bundles.ReadDir(dir, nil); err == nil || !strings.Contains(err.Error(), "bundle too large") {
		t.Errorf("ReadDir past the bound: %v", err)
	}
}

// A tar entry is refused on its header, before a byte of it is read (issue 30, item 8):
// a sparse file, which archive/tar expands into zeros the archive does not hold, in any of
// the formats it reads; a file whose declared size, alone or with the files before it,
// passes MaxUnpacked; and every entry that is neither a regular file nor a directory, which
// OPA would skip unread. Every reader refuses each, naming the entry.
func TestAnEntryABundleMayNotHoldIsRefusedOnItsHeaderByEveryReader(t *testing.T) {
	const tib = 1 << 40
	manifest := rawtar.Manifest(`"upgradescope/custom/x"`)
	type refusal struct {
		name    string
		entries []rawtar.Entry
		want    string
	}
	var tests []refusal
	for _, format := range rawtar.SparseFormats {
		tests = append(tests, refusal{
			name:    "a 4 TiB sparse file in " + format + " format",
			entries: []rawtar.Entry{manifest, rawtar.SparseEntry(format, "upgradescope/custom/x/data.json", 4*tib)},
			want:    `"upgradescope/custom/x/data.json" is a sparse file`,
		})
	}
	tests = append(tests,
		refusal{"a sparse file of one byte", []rawtar.Entry{rawtar.SparseEntry(rawtar.OldGNU, "x/data.json", 1)}, `"x/data.json" is a sparse file`},
		refusal{"a file declaring 200 GiB with no data behind its header",
			[]rawtar.Entry{manifest, {Name: "x/data.json", Type: '0', Size: 200 << 30}},
			`bundle too large: unpacks to more than 64 MiB: "x/data.json" declares 214748364800 bytes`},
		refusal{"a file within the bound that brings the files before it past it",
			[]rawtar.Entry{{Name: "a/data.json", Type: '0', Size: 1024, Data: make([]byte, 1024)}, {Name: "b/data.json", Type: '0', Size: bundles.MaxUnpacked}},
			`"b/data.json" declares 67108864 bytes, beside 1024 bytes of files before it`},
		refusal{"a PAX size record of 1 TiB", []rawtar.Entry{{Name: "x/data.json", Type: '0', PAX: [][2]string{{"size", "1099511627776"}}}},
			`"x/data.json" declares 1099511627776 bytes`},
	)
	for _, kind := range []struct {
		typ  byte
		want string
	}{
		{'1', "a hard link"}, {'2', "a symbolic link"}, {'3', "a device"}, {'4', "a device"}, {'6', "a FIFO"},
		{'7', `an entry of type '7'`}, {'D', `an entry of type 'D'`}, {'V', `an entry of type 'V'`}, {'N', `an entry of type 'N'`},
	} {
		tests = append(tests, refusal{
			name:    "an entry of type " + string(kind.typ),
			entries: []rawtar.Entry{manifest, {Name: "upgradescope/custom/x/x.rego", Type: kind.typ}},
			want:    `"upgradescope/custom/x/x.rego" is ` + kind.want + "; a bundle holds only regular files and directories",
		})
	}
	_, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	vc := bundles.VerificationConfig(string(pub), "RS256")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tarball := rawtar.Tarball(t, tt.entries...)
			path := filepath.Join(t.TempDir(), "b.tar.gz")
			if err := os.WriteFile(path, tarball, 0o600); err != nil {
				t.Fatal(err)
			}
			readers := map[string]func() error{
				"Read":              func() error { _, err := bundles.Read(bytes.NewReader(tarball), nil); return err },
				"Read with a key":   func() error { _, err := bundles.Read(bytes.NewReader(tarball), vc); return err },
				"Inspect":           func() error { _, err := bundles.Inspect(bytes.NewReader(tarball)); return err },
				"Fetch of the file": func() error { _, err := bundles.Fetch(context.Background(), path, bundles.Remote{}, nil); return err },
			}
			for what, read := range readers {
				if err := read(); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: %v, want %q", what, err, tt.want)
				}
			}
		})
	}
}

// What the entry checks let through still reads: directories, a PAX global header (git
// archive writes one), GNU long names and PAX records that are no sparse map.
func TestABundleOfFilesDirectoriesAndHeadersStillReads(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	long := "upgradescope/custom/x/" + strings.Repeat("n", 120) + ".rego"
	for _, e := range []struct {
		h    tar.Header
		data string
	}{
		{tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "0123abcd"}}, ""},
		{tar.Header{Typeflag: tar.TypeDir, Name: "upgradescope/custom/x/", Mode: 0o755}, ""},
		{tar.Header{Typeflag: tar.TypeReg, Name: ".manifest", Mode: 0o644}, `{"revision": "r1", "roots": ["upgradescope/custom/x"]}`},
		{tar.Header{Typeflag: tar.TypeReg, Name: long, Mode: 0o644, Format: tar.FormatGNU}, "package upgradescope.custom.x\n\nfindings := []\n"},
		{tar.Header{Typeflag: tar.TypeReg, Name: "upgradescope/custom/x/data.json", Mode: 0o644,
			PAXRecords: map[string]string{"SCHILY.xattr.user.note": "kept"}}, `{"limit": 3}`},
	} {
		e.h.Size = int64(len(e.data))
		if err := tw.WriteHeader(&e.h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := bundles.Inspect(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"data.json", long}; sum.Revision != "r1" || !slices.Equal(sum.Files, want) {
		t.Errorf("Inspect = revision %q, files %v; want r1 and %v", sum.Revision, sum.Files, want)
	}
}
