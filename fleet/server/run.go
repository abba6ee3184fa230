package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
)

// Process is `upgradescope serve` once its flags are read and its store is open: a Server
// evaluating with a bundle set that polling keeps current, served on a listener until its
// context ends, then drained. Fill its fields and call Run once.
type Process struct {
	// Config is the Server's. Run sets Engine, WithCandidate and Evaluated from Bundles and
	// adds Bundles' metrics to Collectors.
	Config Config
	// Bundles is the set the server evaluates with (required). Each engine it swaps in
	// reaches the server, and the server hands it every inventory it judged, which the set
	// rehearses its next engine on.
	Bundles *policyset.Set
	// Poll polls Poll.URLs into Bundles (--bundle-url); nothing is polled without URLs.
	// Run sets its Activate and Observed.
	Poll bundles.PollOptions
	// PublishEvery is the wait between two looks at Config.PublishDir for new bundles,
	// which must be signed by Config.Verification's key.
	PublishEvery time.Duration
	// Observed is told the result of every poll, of Poll.URLs and Config.PublishDir alike
	// (nil: Bundles.Observed).
	Observed func(src, result string, err error)
	// Retention is the age past which the background pruning deletes snapshots (0 keeps
	// all; see runRetention).
	Retention time.Duration
	// Drain is how long a stop waits for requests in flight; 0 cancels them at once.
	Drain time.Duration
	// TLSCertFile and TLSKeyFile, when set, serve HTTPS with this pair, loaded again when
	// the files change (certReloader).
	TLSCertFile, TLSKeyFile string
	// Listening, when set, is told the URL served as soon as requests are accepted: the
	// scheme, the listener's address and Config.PathPrefix, where the dashboard is and what
	// agents push to.
	Listening func(url string)
}

// lastJudgedTimeout bounds reading the inventory to rehearse new bundles on at the start.
const lastJudgedTimeout = time.Minute

// Run builds the Server and starts polling, so each source's current bundle is active
// before the first request, then serves ln until ctx ends or serving fails. A stop drains:
// ln closes at once, requests in flight get Drain to finish, what still runs after it is
// cancelled (Close), and Run returns once the background loops (retention, re-evaluation,
// notifications) and polling have stopped, so the store can be closed under none of them.
// Run closes ln; it answers nil after a stop, and an error when the server could not start
// or stopped serving on its own.
func (p *Process) Run(ctx context.Context, ln net.Listener) error {
	srv, stopPolling, err := p.start(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopPolling()
	return p.serve(ctx, ln, srv)
}

func (p *Process) logger() *slog.Logger {
	if p.Config.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Config.Logger
}

// start builds the Server on Bundles and starts polling; the func it answers stops polling.
func (p *Process) start(ctx context.Context) (*Server, func(), error) {
	if p.Bundles == nil {
		return nil, nil, errors.New("server: a bundle set is required")
	}
	srv, err := p.newServer()
	if err != nil {
		return nil, nil, err
	}
	p.rememberLastJudged(ctx, srv)
	stop, err := p.startPolling(ctx)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, stop, nil
}

// newServer builds the Server with Bundles' engine and wires the two together: a swap of
// the set reaches the server, an inventory the server judged reaches the set, and the
// set's metrics are served at /metrics.
func (p *Process) newServer() (*Server, error) {
	set, cfg := p.Bundles, p.Config
	cfg.Engine, _ = set.Engine()
	cfg.WithCandidate, cfg.Evaluated = set.WithCandidate, set.Remember
	metrics := policyset.NewMetrics()
	set.Attach(metrics)
	cfg.Collectors = slices.Concat(cfg.Collectors, metrics.Collectors())
	srv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	set.OnSwap(srv.swap)
	return srv, nil
}

// rememberLastJudged gives Bundles the inventory to rehearse a new bundle on before the
// first push since the start: the stored snapshot the server judged last. Without one a
// new set is taken up unrehearsed, which the log says. Nothing to do when nothing polls.
func (p *Process) rememberLastJudged(ctx context.Context, srv *Server) {
	if len(p.Poll.URLs) == 0 && p.Config.PublishDir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, lastJudgedTimeout)
	defer cancel()
	doc, targets, err := srv.lastJudged(ctx)
	switch {
	case err != nil:
		p.logger().Warn("no stored inventory to rehearse new bundles on until the first push", "err", err)
	case doc != nil:
		p.Bundles.Remember(doc, targets)
	}
}

// startPolling polls Poll.URLs and Config.PublishDir into Bundles, whose swaps reach the
// server; each source's current bundle is activated before it returns.
func (p *Process) startPolling(ctx context.Context) (func(), error) {
	observed := p.Observed
	if observed == nil {
		observed = p.Bundles.Observed
	}
	stop := func() {}
	if len(p.Poll.URLs) > 0 {
		po := p.Poll
		po.Activate, po.Observed = p.Bundles.Activate, observed
		poller, err := bundles.Poll(ctx, po)
		if err != nil {
			return nil, err
		}
		stop = func() { poller.Stop(context.Background()) }
	}
	if p.Config.PublishDir != "" {
		dir, err := bundles.PollDir(ctx, bundles.DirOptions{Dir: p.Config.PublishDir, Verification: p.Config.Verification,
			Every: p.PublishEvery, Activate: p.Bundles.Activate, Observed: observed})
		if err != nil {
			stop()
			return nil, fmt.Errorf("--publish-dir: %w", err)
		}
		stopURLs := stop
		stop = func() { dir.Stop(); stopURLs() }
	}
	_, revs := p.Bundles.Engine()
	p.logger().Info("evaluating with", "bundles", policyset.Describe(revs))
	return stop, nil
}

// serve serves ln with srv until ctx ends, then drains; see Run.
func (p *Process) serve(ctx context.Context, ln net.Listener, srv *Server) error {
	log := p.logger()
	hs, err := p.httpServer(srv, log)
	if err != nil {
		ln.Close()
		srv.Close()
		return err
	}
	loopCtx, stopLoops := context.WithCancel(ctx)
	defer stopLoops()
	loops := p.startLoops(loopCtx, srv, log)
	served := make(chan error, 1)
	scheme := "http"
	if hs.TLSConfig != nil {
		scheme = "https"
		go func() { served <- hs.ServeTLS(ln, "", "") }()
	} else {
		go func() { served <- hs.Serve(ln) }()
	}
	if p.Listening != nil {
		p.Listening(scheme + "://" + ln.Addr().String() + p.Config.PathPrefix)
	}
	select {
	case err := <-served:
		hs.Close() // cancels the requests still running, as a drain that ran out does
		stopLoops()
		srv.Close()
		loops.Wait()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	p.drain(hs, log)
	srv.Close()
	// A notification delivery in flight ends with ctx; its lease lets the next start retry it.
	loops.Wait()
	return nil
}

// httpServer is srv's handler behind the timeouts a push needs, with TLS when a pair is
// given.
func (p *Process) httpServer(srv *Server, log *slog.Logger) (*http.Server, error) {
	// WriteTimeout outlasts the longest push: 60 s to send it (waiting for a turn
	// included), 10 s for a decode, 20 s for an evaluation slot and a minute to judge and
	// store it. Reads set no deadline of their own beyond it.
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 4 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if p.TLSCertFile != "" {
		certs, err := newCertReloader(p.TLSCertFile, p.TLSKeyFile, log)
		if err != nil {
			return nil, err
		}
		hs.TLSConfig = certs.TLSConfig()
	}
	return hs, nil
}

// startLoops runs the background work until ctx ends: retention, re-evaluation and
// notification delivery, whose sinks it logs.
func (p *Process) startLoops(ctx context.Context, srv *Server, log *slog.Logger) *sync.WaitGroup {
	var loops sync.WaitGroup
	loops.Go(func() { srv.runRetention(ctx, p.Retention) })
	loops.Go(func() { srv.runReevaluation(ctx) })
	loops.Go(func() { srv.runNotifications(ctx) })
	for _, sink := range p.Config.Sinks {
		log.Info("notifications on", "sink", sink.Name, "url", notify.Redacted(sink.URL), "signed", sink.Secret != "")
	}
	return &loops
}

// drain stops accepting and waits up to Drain for the requests in flight.
func (p *Process) drain(hs *http.Server, log *slog.Logger) {
	log.Info("stopping: draining requests in flight", "for", p.Drain)
	ctx, cancel := context.WithTimeout(context.Background(), p.Drain)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		// A stop is still a stop: what did not finish is cancelled before the store closes
		// (closing its connection cancels a request's context), and an agent whose push was
		// cut off pushes it again.
		log.Warn("stopping: requests still running after the drain are cancelled", "drain", p.Drain, "err", err)
		hs.Close()
	}
}
