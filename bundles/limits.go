package bundles

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/plugins/rest"

	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// MaxFiles bounds the entries of a bundle, tarball or directory.
const MaxFiles = 10_000

// MaxUnpacked bounds what a bundle unpacks to, all files together: a small gzip can hold
// gigabytes of zeros, and OPA reads every file before a signature is checked.
const MaxUnpacked = MaxSize

// errTooLarge is every bound a bundle crosses.
var errTooLarge = errors.New("bundle too large")

// readBounded reads a bundle tarball whole (at most MaxSize compressed) and walks it once,
// discarding what it reads, before anything is kept: it fails past MaxUnpacked bytes unpacked,
// read or declared, MaxFiles entries or an entry a bundle may not hold (a sparse file, a
// link, a device…), so a gzip bomb or a sparse hole costs one bounded pass and no memory.
func readBounded(in io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(in, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	if len(raw) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d MiB compressed", errTooLarge, MaxSize>>20)
	}
	return raw, checkTarball(raw)
}

// checkTarball walks a gzipped tar and fails once it would unpack past MaxUnpacked, holds
// more than MaxFiles entries or an entry walkTarball refuses.
func checkTarball(raw []byte) error {
	return walkTarball(raw, func(_ *tar.Header, data io.Reader) error {
		_, err := io.Copy(io.Discard, data)
		return err
	})
}

// walkTarball is every read of a bundle tarball's entries: it hands visit each regular file
// and directory, bounded, and fails on the first entry it refuses (checkEntry). visit may
// return errStopWalk to end the walk early without an error.
func walkTarball(raw []byte, visit func(h *tar.Header, data io.Reader) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("read bundle: %w", err)
	}
	// The tar headers count too: a bomb of empty files is all headers.
	tr := tar.NewReader(&boundedReader{r: zr, left: MaxUnpacked})
	var declared int64
	for files := 0; ; files++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil && files == MaxFiles {
			return fmt.Errorf("%w: more than %d files", errTooLarge, MaxFiles)
		}
		if err == nil {
			err = checkEntry(h, &declared)
		}
		if err == nil {
			err = visit(h, tr)
		}
		switch {
		case errors.Is(err, errStopWalk):
			return nil
		case errors.Is(err, errTooLarge), errors.As(err, new(*entryError)):
			return err
		case err != nil:
			return fmt.Errorf("read bundle: %w", err)
		}
	}
}

// errStopWalk ends walkTarball early, as fs.SkipAll ends a directory walk.
var errStopWalk = errors.New("stop the walk")

// entryError is a tar entry a bundle may not hold.
type entryError struct{ name, kind string }

func (e *entryError) Error() string {
	return fmt.Sprintf("bundle entry %q is %s; a bundle holds only regular files and directories, as bundle build and opa build write it", e.name, e.kind)
}

// checkEntry refuses what a bundle may not hold before a byte of it is read: an entry that is
// neither a regular file nor a directory (OPA would skip it unread, so a bundle is what it
// loads), a sparse file, which archive/tar expands into zeros no byte of the archive holds
// (a 4 TiB hole in a 336-byte bundle), and a file whose declared size brings the bundle past
// MaxUnpacked; declared is the sum of the files before h.
func checkEntry(h *tar.Header, declared *int64) error {
	if kind := entryKind(h); kind != "" {
		return &entryError{name: h.Name, kind: kind}
	}
	if h.Typeflag != tar.TypeReg {
		return nil
	}
	if h.Size > MaxUnpacked-*declared {
		return fmt.Errorf("%w: unpacks to more than %d MiB: %q declares %d bytes, beside %d bytes of files before it",
			errTooLarge, MaxUnpacked>>20, h.Name, h.Size, *declared)
	}
	*declared += h.Size
	return nil
}

// entryKind names what a tar entry is when a bundle may not hold it; "" for a regular file,
// a directory, or a PAX global header (git archive writes one; it holds no file).
func entryKind(h *tar.Header) string {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return "a sparse file (GNU PAX sparse headers)"
		}
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeDir, tar.TypeXGlobalHeader:
		return ""
	case tar.TypeGNUSparse:
		return "a sparse file (GNU 'S')"
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "a device"
	case tar.TypeFifo:
		return "a FIFO"
	}
	return fmt.Sprintf("an entry of type %q", h.Typeflag)
}

// boundedReader fails, rather than ending, past its limit.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: unpacks to more than %d MiB", errTooLarge, MaxUnpacked>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1] // one byte past the limit shows the stream goes on
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("%w: unpacks to more than %d MiB", errTooLarge, MaxUnpacked>>20)
	}
	return n, err
}

// checkDir holds a bundle directory to the same bounds, by the sizes of the files a read
// would load (tests left out).
func checkDir(dir string) error {
	var total int64
	files := 0
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		depth := strings.Count(strings.TrimPrefix(path, dir), string(filepath.Separator))
		if SkipTests(path, info, depth) {
			return nil
		}
		if files++; files > MaxFiles {
			return fmt.Errorf("%w: more than %d files", errTooLarge, MaxFiles)
		}
		if total += info.Size(); total > MaxUnpacked {
			return fmt.Errorf("%w: more than %d MiB", errTooLarge, MaxUnpacked>>20)
		}
		return nil
	})
}

// boundedClient is the HTTP client of every bundle download: the same bearer token file as
// OPA's own, and a transport that reads a 200 response whole and checks it with
// readBounded before OPA unpacks it.
type boundedClient struct {
	tokenFile string
}

// boundedPlugin names boundedClient among OPA's credentials.
const boundedPlugin = "upgradescope-bounded"

func (c *boundedClient) NewClient(cfg rest.Config) (*http.Client, error) {
	t, err := rest.DefaultTLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	hc := rest.DefaultRoundTripperClient(t, *cfg.ResponseHeaderTimeoutSeconds)
	hc.Transport = boundedTransport{hc.Transport}
	return hc, nil
}

func (c *boundedClient) Prepare(req *http.Request) error {
	if c.tokenFile == "" {
		return nil
	}
	raw, err := smallfile.Read(c.tokenFile, smallfile.MaxSecret)
	if err != nil {
		return fmt.Errorf("bundle token file: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(raw)))
	return nil
}

type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	raw, err := readBounded(resp.Body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	resp.ContentLength = int64(len(raw))
	return resp, nil
}
