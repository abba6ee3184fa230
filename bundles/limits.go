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
// discarding what it reads, before anything is kept: it fails past MaxUnpacked bytes unpacked
// or MaxFiles entries, so a gzip bomb costs one bounded pass and no memory.
func readBounded(in io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(in, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d MiB compressed", errTooLarge, MaxSize>>20)
	}
	return raw, checkTarball(raw)
}

// checkTarball walks a gzipped tar and fails once it unpacks past MaxUnpacked or holds more
// than MaxFiles entries.
func checkTarball(raw []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("read bundle: %w", err)
	}
	// The tar headers count too: a bomb of empty files is all headers.
	unpacked := &boundedReader{r: zr, left: MaxUnpacked}
	tr := tar.NewReader(unpacked)
	for files := 0; ; files++ {
		_, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil && files == MaxFiles {
			return fmt.Errorf("%w: more than %d files", errTooLarge, MaxFiles)
		}
		if err == nil {
			_, err = io.Copy(io.Discard, tr)
		}
		if errors.Is(err, errTooLarge) {
			return err
		}
		if err != nil {
			return fmt.Errorf("read bundle: %w", err)
		}
	}
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
