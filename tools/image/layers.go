package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"time"
)

// nonroot is the user the image runs as: distroless's nonroot, so a pod's
// runAsUser/fsGroup of 65532 means the same user in the Dockerfile's image and in ours.
const (
	nonrootUID  = 65532
	nonrootHome = "/home/nonroot"
)

// passwd and group hold the three users distroless's static image has. Their shell is
// /sbin/nologin, which the image does not hold: there is no shell to log in to.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// caBundlePath is where Go's crypto/x509 looks first on Linux, so the binary finds the
// bundle without SSL_CERT_FILE.
const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of a layer. Paths are absolute inside the image.
type entry struct {
	path     string
	dir      bool
	mode     int64
	uid, gid int
	data     []byte
}

func file(p string, mode int64, data []byte) entry { return entry{path: p, mode: mode, data: data} }

func dir(p string, mode int64) entry { return entry{path: p, dir: true, mode: mode} }

// baseEntries is what distroless's static base gives a Go binary: users, the CA bundle, a
// home the nonroot user may write to and a sticky /tmp.
func baseEntries(caBundle []byte) []entry {
	home := dir(nonrootHome, 0o700)
	home.uid, home.gid = nonrootUID, nonrootUID
	return []entry{
		file("/etc/passwd", 0o644, []byte(passwd)),
		file("/etc/group", 0o644, []byte(group)),
		file(caBundlePath, 0o644, caBundle),
		home,
		dir("/tmp", 0o1777),
	}
}

// binaryEntries is the release binary, alone in a layer of its own so an upgrade pulls
// one layer.
func binaryEntries(binary []byte) []entry {
	return []entry{file("/upgradescope", 0o755, binary)}
}

// layerTar writes entries as a deterministic tar: every parent directory present, names
// sorted, every time set to mtime, owners numeric with no names. Entries are owned by
// root unless they say otherwise (the nonroot home).
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	all := withParents(entries)
	sort.Slice(all, func(i, j int) bool { return all[i].path < all[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range all {
		if err := writeEntry(tw, e, mtime); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close layer tar: %w", err)
	}
	return buf.Bytes(), nil
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	// Layer tars name entries relative to the root, as docker build writes them.
	h := &tar.Header{
		Name:    e.path[1:],
		Mode:    e.mode,
		Uid:     e.uid,
		Gid:     e.gid,
		ModTime: mtime,
		Format:  tar.FormatUSTAR,
	}
	if e.dir {
		h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
	} else {
		h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write layer entry %s: %w", e.path, err)
	}
	if _, err := io.Copy(tw, bytes.NewReader(e.data)); err != nil {
		return fmt.Errorf("write layer entry %s: %w", e.path, err)
	}
	return nil
}

// withParents adds a 0755 root-owned directory for every parent an entry needs and the
// entries do not list, so extraction never invents directories with its own defaults.
func withParents(entries []entry) []entry {
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.path] = true
	}
	all := append([]entry(nil), entries...)
	for _, e := range entries {
		for p := path.Dir(e.path); p != "/"; p = path.Dir(p) {
			if !seen[p] {
				seen[p] = true
				all = append(all, dir(p, 0o755))
			}
		}
	}
	return all
}
