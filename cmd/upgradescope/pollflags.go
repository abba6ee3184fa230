package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/engine"
)

// pollFlags poll bundle URLs for new revisions, which are verified, compiled off the
// evaluating path and swapped into a bundle set atomically; agent and serve share them.
type pollFlags struct {
	urls                         []string
	cache                        string
	minDelay, maxDelay, longPoll time.Duration
}

func (p *pollFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&p.urls, "bundle-url", nil, "bundle URL to poll (repeatable; needs --verification-key): a new revision is verified, compiled off the evaluating path and swapped in atomically")
	fl.StringVar(&p.cache, "bundle-cache", "", "directory keeping the last good bundle of each --bundle-url for cold starts")
	fl.DurationVar(&p.minDelay, "bundle-poll-min-delay", time.Minute, "shortest wait between polls of a --bundle-url (jittered up to the maximum)")
	fl.DurationVar(&p.maxDelay, "bundle-poll-max-delay", 2*time.Minute, "longest wait between polls of a --bundle-url")
	fl.DurationVar(&p.longPoll, "bundle-long-poll", 0, "ask the bundle server to hold each poll this long for a new revision (0: off)")
}

// checkDelays refuses delays the poller cannot keep.
func (p *pollFlags) checkDelays() error {
	if p.minDelay < time.Second || p.maxDelay < p.minDelay {
		return fmt.Errorf("--bundle-poll-min-delay %s and --bundle-poll-max-delay %s: want 1s ≤ min ≤ max", p.minDelay, p.maxDelay)
	}
	return nil
}

// options checks the --bundle-url flags against the key of b; polling starts once the
// agent or server that reads set is built.
func (p *pollFlags) options(b *bundleFlags, set *policyset.Set) (bundles.PollOptions, error) {
	po := bundles.PollOptions{URLs: p.urls, CacheDir: p.cache, MinDelay: p.minDelay, MaxDelay: p.maxDelay,
		LongPoll: p.longPoll, Activate: set.Activate}
	if len(p.urls) == 0 {
		return po, nil
	}
	for _, u := range p.urls {
		if !bundles.IsURL(u) {
			return po, fmt.Errorf("--bundle-url %s: want an http(s) URL; a file is loaded with --bundle", bundles.SanitizedURL(u))
		}
	}
	if b.keyFile == "" {
		return po, errors.New("--bundle-url: polled bundles must be signed; pass --verification-key")
	}
	if err := p.checkDelays(); err != nil {
		return po, err
	}
	vc, err := b.verification()
	if err != nil {
		return po, err
	}
	po.Remote, po.Verification = b.remote(), vc
	return po, nil
}

// start polls every --bundle-url into set; the first downloads are awaited (see
// bundles.Poll).
func (p *pollFlags) start(ctx context.Context, log *slog.Logger, set *policyset.Set, po bundles.PollOptions) (func(), error) {
	if len(p.urls) == 0 {
		return func() {}, nil
	}
	po.Observed = observer(log, set)
	poller, err := bundles.Poll(ctx, po)
	if err != nil {
		return nil, err
	}
	return func() { poller.Stop(context.Background()) }, nil
}

// observer records a poll's result in set and logs it.
func observer(log *slog.Logger, set *policyset.Set) func(src, result string, err error) {
	logPoll := pollLogger(log, set)
	return func(src, result string, err error) {
		err = withLimitFlag(err)
		set.Observed(src, result, err)
		logPoll(src, result, err)
	}
}

// pollLogger logs an activation, and a failure once until it changes or an update succeeds:
// the downloader retries a failure within a second, and 304s stay quiet.
func pollLogger(log *slog.Logger, set *policyset.Set) func(src, result string, err error) {
	var mu sync.Mutex
	last := map[string]string{}
	return func(src, result string, err error) {
		mu.Lock()
		defer mu.Unlock()
		_, revs := set.Engine()
		switch {
		case err != nil && last[src] != err.Error():
			last[src] = err.Error()
			log.Error("bundle update failed; keeping the active bundles", "source", src, "result", result, "error", err.Error(), "active", policyset.Describe(revs))
		case err == nil && result == bundles.ResultActivated:
			delete(last, src)
			log.Info("bundle activated", "source", src, "active", policyset.Describe(revs))
		}
	}
}

// bundleSet is the embedded bundles plus every --bundle of b, within its evaluation
// bounds, as a set polled bundles join later.
func (b *bundleFlags) bundleSet(ctx context.Context) (*policyset.Set, error) {
	base, err := b.base(ctx)
	if err != nil {
		return nil, err
	}
	return policyset.New(ctx, base)
}

// base is what every set of the command is built from: the evaluation bounds, the tool
// version and every --bundle, fetched and verified.
func (b *bundleFlags) base(ctx context.Context) (policyset.Base, error) {
	limits, err := b.limits.engineOption()
	if err != nil {
		return policyset.Base{}, err
	}
	fetched, err := b.fetch(ctx)
	if err != nil {
		return policyset.Base{}, err
	}
	return policyset.Base{Options: []engine.Option{limits, engine.WithToolVersion(version)}, Bundles: fetched}, nil
}
