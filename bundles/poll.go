package bundles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/plugins"

	"github.com/upgradescope/upgradescope/internal/atomicfile"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// Poll results, as metrics label them.
const (
	ResultActivated        = "activated"
	ResultNotModified      = "not_modified"
	ResultDownloadFailed   = "download_failed"
	ResultActivationFailed = "activation_failed"
	ResultCacheFailed      = "cache_failed"
)

// PollOptions configure Poll.
type PollOptions struct {
	URLs         []string
	Remote       Remote
	Verification *bundle.VerificationConfig
	// MinDelay and MaxDelay bound the jittered wait between polls (whole seconds; OPA's
	// defaults are 60 s and 120 s). LongPoll, when set, asks the server to hold a request
	// that long for a new revision.
	MinDelay, MaxDelay, LongPoll time.Duration
	// CacheDir, when set, keeps the last good bundle of each URL for cold starts.
	CacheDir string
	// Activate is handed every new, verified bundle; an error keeps the last good one and the
	// same revision is downloaded and tried again at the next poll.
	Activate func(ctx context.Context, f *Fetched) error
	// Observed is told the result of every poll (for metrics and status).
	Observed func(src, result string, err error)
}

// Poller runs one OPA downloader per URL.
type Poller struct {
	downloaders []*download.Downloader
}

// Poll starts polling every URL; Stop ends it. Before it starts, each URL's cached bundle (or,
// without one, a first download) is activated, so the first evaluation after a cold start
// already uses the served revision when the server or the cache has it.
func Poll(ctx context.Context, opts PollOptions) (*Poller, error) {
	if opts.MinDelay <= 0 {
		opts.MinDelay, opts.MaxDelay = 60*time.Second, 120*time.Second
	}
	if opts.MaxDelay < opts.MinDelay {
		return nil, fmt.Errorf("bundle polling: the maximum delay %s is below the minimum %s", opts.MaxDelay, opts.MinDelay)
	}
	// Cold starts run side by side: a server that never answers costs its 30 s once, not once
	// per URL behind it.
	p := &Poller{downloaders: make([]*download.Downloader, len(opts.URLs))}
	errs := make([]error, len(opts.URLs))
	var wg sync.WaitGroup
	for i, src := range opts.URLs {
		wg.Go(func() { p.downloaders[i], errs[i] = startOne(ctx, src, opts) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.Stop(ctx)
		return nil, err
	}
	return p, nil
}

// Stop ends polling and waits for the downloaders.
func (p *Poller) Stop(ctx context.Context) {
	for _, d := range p.downloaders {
		if d != nil {
			d.Stop(ctx)
		}
	}
}

func startOne(ctx context.Context, src string, opts PollOptions) (*download.Downloader, error) {
	trigger := plugins.TriggerPeriodic
	cfg := download.Config{Trigger: &trigger, Polling: download.PollingConfig{
		MinDelaySeconds: seconds(opts.MinDelay), MaxDelaySeconds: seconds(opts.MaxDelay),
	}}
	if opts.LongPoll > 0 {
		cfg.Polling.LongPollingTimeoutSeconds = seconds(opts.LongPoll)
	}
	d, err := NewDownloader(src, opts.Remote, opts.Verification, cfg)
	if err != nil {
		return nil, err
	}
	st := &pollState{src: src, opts: opts, d: d}
	st.good = st.coldStart(ctx)
	d.SetCache(st.good)
	d.WithCallback(st.update)
	d.Start(ctx)
	return d, nil
}

func seconds(d time.Duration) *int64 {
	s := max(int64(d/time.Second), 1)
	return &s
}

// pollState is one URL's downloader state: the ETag of the last bundle that activated.
type pollState struct {
	src  string
	opts PollOptions
	d    *download.Downloader
	good string
}

// coldStart activates the cached bundle, else a first download; it returns the ETag the
// downloader starts from, so an unchanged server answers the first poll with 304.
func (s *pollState) coldStart(ctx context.Context) string {
	cached, etag, err := readCache(s.opts.CacheDir, s.src, s.opts.Verification)
	if err == nil && cached != nil {
		err = s.opts.Activate(ctx, cached)
		if err == nil {
			s.observe(ResultActivated, nil)
			return etag
		}
		err = fmt.Errorf("cached bundle: %w", err)
	}
	if err != nil {
		s.observe(ResultActivationFailed, err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	f, err := Fetch(fctx, s.src, s.opts.Remote, s.opts.Verification)
	if err != nil {
		s.observe(ResultDownloadFailed, err)
		return ""
	}
	if err := s.opts.Activate(ctx, f); err != nil {
		s.observe(ResultActivationFailed, err)
		return ""
	}
	s.persist(f)
	s.observe(ResultActivated, nil)
	return f.ETag
}

// update is the downloader's callback; it runs on the downloader's goroutine, never on an
// evaluation's.
func (s *pollState) update(ctx context.Context, u download.Update) error {
	if ctx.Err() != nil {
		return nil // stopping: a cancelled request is no failed update
	}
	switch {
	case u.Error != nil:
		s.observe(ResultDownloadFailed, fmt.Errorf("bundle %s: %w", SanitizedURL(s.src), Redact(u.Error, s.src)))
	case u.Bundle == nil:
		s.observe(ResultNotModified, nil)
	default:
		f := &Fetched{Source: SanitizedURL(s.src), Bundle: u.Bundle, Raw: readAll(u.Raw), ETag: u.ETag}
		if err := s.opts.Activate(ctx, f); err != nil {
			// Back to the last good ETag, or the server's 304s would hide the failed revision
			// and its successor would be the first thing tried again.
			s.d.SetCache(s.good)
			s.observe(ResultActivationFailed, err)
			return nil
		}
		s.good = u.ETag
		s.persist(f)
		s.observe(ResultActivated, nil)
	}
	return nil
}

func (s *pollState) observe(result string, err error) {
	if s.opts.Observed != nil {
		// Every message reaches logs and the status: nothing of the URL's secrets may.
		s.opts.Observed(SanitizedURL(s.src), result, Redact(err, s.src))
	}
}

func (s *pollState) persist(f *Fetched) {
	if s.opts.CacheDir == "" || len(f.Raw) == 0 {
		return
	}
	if err := writeCache(s.opts.CacheDir, s.src, f); err != nil {
		s.observe(ResultCacheFailed, fmt.Errorf("bundle cache: %w", err))
	}
}

// cacheName is the file a URL's bundle is cached in: a digest, so no part of the URL (a
// token in a query) reaches the file system.
func cacheName(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:12])
}

func writeCache(dir, src string, f *Fetched) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	base := filepath.Join(dir, cacheName(src))
	if err := atomicfile.Write(base+".tar.gz", f.Raw); err != nil {
		return err
	}
	return atomicfile.Write(base+".etag", []byte(f.ETag))
}

// readCache reads and verifies a cached bundle; none cached is (nil, "", nil).
func readCache(dir, src string, vc *bundle.VerificationConfig) (*Fetched, string, error) {
	if dir == "" {
		return nil, "", nil
	}
	base := filepath.Join(dir, cacheName(src))
	raw, err := smallfile.Read(base+".tar.gz", MaxSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("bundle cache %s: %w", base+".tar.gz", err)
	}
	b, err := read(bytes.NewReader(raw), vc)
	if err != nil {
		return nil, "", fmt.Errorf("bundle cache %s: %w", base+".tar.gz", err)
	}
	etag, _ := smallfile.Read(base+".etag", smallfile.MaxSecret)
	return &Fetched{Source: SanitizedURL(src), Bundle: &b, Raw: raw, ETag: string(etag)}, string(etag), nil
}
