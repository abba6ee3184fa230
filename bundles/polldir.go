package bundles

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/report"
)

// DirOptions configure PollDir.
type DirOptions struct {
	// Dir holds the bundles (*.tar.gz), as Handler serves them.
	Dir string
	// Verification is required: what PollDir activates is evaluated with, so it must be
	// signed by this key.
	Verification *bundle.VerificationConfig
	// Every is the wait between two looks at Dir.
	Every time.Duration
	// Activate and Observed are PollOptions' own: a new, verified bundle, and the result of
	// every look at a file that changed (not_modified is not reported).
	Activate func(ctx context.Context, f *Fetched) error
	Observed func(src, result string, err error)
}

// DirPoller watches a directory of bundles; Stop ends it.
type DirPoller struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// PollDir activates every bundle of Dir before it returns, then looks at Dir every Every:
// a file whose content changed is read, verified and activated. A look stats each bundle
// file and hashes it again only when its stat changed or was too recent to trust (the
// index Handler computes its ETags with), so an unchanged directory costs a stat a file
// and the ETag that changes is the one agents are served. A file whose content did not
// change is not tried again when it did not verify; one whose activation failed (a
// rehearsal out of time on a busy server) is tried again after a backoff. A file that
// goes away leaves its bundle active, as an agent keeps the last good bundle of a URL that
// answers 404.
func PollDir(ctx context.Context, opts DirOptions) (*DirPoller, error) {
	switch {
	case opts.Verification == nil:
		return nil, fmt.Errorf("bundle directory %s: a verification key is required", opts.Dir)
	case opts.Every <= 0:
		return nil, fmt.Errorf("bundle directory %s: want a positive wait between looks, got %s", opts.Dir, opts.Every)
	}
	if info, err := os.Stat(opts.Dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("bundle directory %s: not a directory", opts.Dir)
	}
	w := &dirWatch{opts: opts, x: newIndex(opts.Dir, ServeOptions{}), seen: map[string]string{}, failed: map[string]retry{}}
	w.look(ctx)
	ctx, cancel := context.WithCancel(ctx)
	p := &DirPoller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(opts.Every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				w.look(ctx)
			}
		}
	}()
	return p, nil
}

// Stop ends polling and waits for a look in progress.
func (p *DirPoller) Stop() {
	p.cancel()
	<-p.done
}

// dirWatch is what PollDir knows of its directory: the ETag of each file it last tried,
// and when to try again a content whose activation failed.
type dirWatch struct {
	opts   DirOptions
	x      *index
	seen   map[string]string
	failed map[string]retry
}

// retry is a content whose activation failed: it may have failed for a passing reason (a
// rehearsal that ran out of time on a busy server), so it is tried again after a wait that
// doubles up to maxActivationBackoff, unlike a content that did not verify.
type retry struct {
	etag     string
	attempts int
	at       time.Time
}

const maxActivationBackoff = 10 * time.Minute

func (w *dirWatch) due(name, etag string) bool {
	r, ok := w.failed[name]
	return !ok || r.etag != etag || !time.Now().Before(r.at)
}

func (w *dirWatch) failedActivation(name, etag string) {
	r := w.failed[name]
	if r.etag != etag {
		r = retry{etag: etag}
	}
	r.attempts++
	wait := w.opts.Every
	for range r.attempts {
		if wait >= maxActivationBackoff/2 {
			wait = maxActivationBackoff
			break
		}
		wait *= 2
	}
	r.at = time.Now().Add(wait)
	w.failed[name] = r
}

// look tries every bundle file whose content changed since the last look, in name order.
func (w *dirWatch) look(ctx context.Context) {
	names, err := bundleNames(w.opts.Dir)
	if err != nil {
		w.observe(w.opts.Dir, ResultDownloadFailed, fmt.Errorf("bundle directory %s: %w", w.opts.Dir, err))
		return
	}
	present := map[string]bool{}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		present[name] = true
		w.try(ctx, name)
	}
	for name := range w.seen {
		if !present[name] {
			delete(w.seen, name)
		}
	}
	for name := range w.failed {
		if !present[name] {
			delete(w.failed, name)
		}
	}
}

// try activates name when its content is new: the index hashes it only when its stat
// changed, as Handler does for the ETag it serves.
func (w *dirWatch) try(ctx context.Context, name string) {
	src := filepath.Join(w.opts.Dir, name)
	f, _, etag, err := w.x.open(name)
	if err != nil {
		w.refused(src, name, err)
		return
	}
	defer f.Close()
	if w.seen[name] == etag || !w.due(name, etag) {
		return
	}
	w.seen[name] = etag
	raw, err := readBounded(f)
	if err != nil {
		w.observe(src, ResultDownloadFailed, fmt.Errorf("bundle %s: %w", src, err))
		return
	}
	b, err := readChecked(raw, w.opts.Verification)
	if err != nil {
		w.observe(src, ResultDownloadFailed, fmt.Errorf("bundle %s: %w", src, err))
		return
	}
	fetched := &Fetched{Source: src, Bundle: &b, Raw: raw, ETag: etag, Signature: report.SignatureVerified}
	if err := w.opts.Activate(ctx, fetched); err != nil {
		delete(w.seen, name)
		w.failedActivation(name, etag)
		if ctx.Err() == nil {
			w.observe(src, ResultActivationFailed, err)
		}
		return
	}
	delete(w.failed, name)
	w.observe(src, ResultActivated, nil)
}

// refused reports a file that could not be opened. One that is no regular file (a FIFO, a
// device) or too large is reported once, as a content that does not verify is, until what
// stops it changes; other errors may pass and are reported at every look.
func (w *dirWatch) refused(src, name string, err error) {
	if errors.Is(err, errNotRegular) || errors.Is(err, errTooLarge) {
		if w.seen[name] == err.Error() {
			return
		}
		w.seen[name] = err.Error()
	}
	w.observe(src, ResultDownloadFailed, fmt.Errorf("bundle %s: %w", src, err))
}

func (w *dirWatch) observe(src, result string, err error) {
	if w.opts.Observed != nil {
		w.opts.Observed(src, result, err)
	}
}

// bundleNames are the *.tar.gz files of dir, sorted; names starting with a dot (a
// publisher's temporary file) are left out, as Handler refuses them.
func bundleNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".tar.gz") && !strings.HasPrefix(n, ".") && !e.IsDir() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}
