package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/logging"
	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/internal/token"
)

// serveFlags are `upgradescope serve`'s flags.
type serveFlags struct {
	listen                  string
	db                      dbFlags
	ingest, read, admin     tokenFlag
	allowAnonymousRead      bool
	requireReadCredential   bool
	targets                 []string
	teamMap                 string
	retention               string
	staleAfter              time.Duration
	reevaluateRate          float64
	maxSnapshotBytes        int
	maxGateBytes            int
	maxAuditBatchBytes      int
	publishDir              string
	pathPrefix              string
	allowedHosts            []string
	tlsCertFile, tlsKeyFile string
	drain                   time.Duration
	bundles                 bundleFlags
	poll                    pollFlags
	notify                  notifyFlags
	logFormat, logLevel     string
}

// tokenFlag is a token given literally (visible in the process list), in a file, or in an
// environment variable.
type tokenFlag struct {
	literal, file string
	env           string
}

func (t *tokenFlag) register(cmd *cobra.Command, name, env, usage string) {
	t.env = env
	cmd.Flags().StringVar(&t.literal, name, "", usage+" (or $"+env+"); prefer --"+name+"-file")
	cmd.Flags().StringVar(&t.file, name+"-file", "", "file holding the "+strings.TrimSuffix(name, "-token")+" token")
}

func (t *tokenFlag) value(name string) (string, error) {
	v, err := token.Source{File: t.file, Literal: t.literal, Env: t.env}.Token()
	if errors.Is(err, token.ErrNone) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("--%s: %w", name, err)
	}
	return v, nil
}

const envAllowedHosts = "UPGRADESCOPE_ALLOWED_HOSTS"

func newServeCommand(s streams) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the fleet server: take agents' pushes, evaluate and store them, serve the fleet API",
		Long: `serve stores every cluster's inventory snapshots and the evaluations it computes for them
(at each cluster's next minor and every --target minor), and serves the fleet matrix, team
rollups, score history and per-cluster reports over HTTP. SQLite by default (--db), PostgreSQL
for several replicas (--db-url). It listens on loopback unless told otherwise, and refuses
another address without a read credential. See docs/server.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), s) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on")
	f.db.register(cmd)
	f.ingest.register(cmd, "ingest-token", "UPGRADESCOPE_INGEST_TOKEN", "shared ingest token that may push as any cluster")
	f.read.register(cmd, "read-token", "UPGRADESCOPE_READ_TOKEN", "token that reads the whole fleet")
	f.admin.register(cmd, "admin-token", "UPGRADESCOPE_ADMIN_TOKEN", "token that reads, deletes and renames clusters")
	fl.BoolVar(&f.allowAnonymousRead, "allow-anonymous-read", false, "serve reads without a credential on a non-loopback address (something else must guard it)")
	fl.BoolVar(&f.requireReadCredential, "require-read-credential", false, "answer 401 to every read until a read token is minted, even on loopback")
	fl.StringSliceVar(&f.targets, "target", nil, fmt.Sprintf("minors every snapshot is also judged at, besides its next minor (at most %d; repeatable)", server.MaxTargets))
	fl.StringVar(&f.teamMap, "team-map", "", "YAML list of {pattern, team}: namespace globs whose team overrides the label, first match wins")
	fl.StringVar(&f.retention, "retention", "90d", "delete snapshots older than this (days as 90d, or a Go duration), keeping each cluster's latest; 0 keeps all")
	fl.DurationVar(&f.staleAfter, "stale-after", server.DefaultStaleAfter, "a cluster that has not pushed for this long is stale")
	fl.Float64Var(&f.reevaluateRate, "reevaluate-rate", server.DefaultReevaluateRate, "clusters a second the background re-evaluation after a bundle change takes at most")
	fl.IntVar(&f.maxSnapshotBytes, "max-snapshot-bytes", push.MaxBytes, "largest push accepted, on the wire and decompressed")
	fl.IntVar(&f.maxGateBytes, "max-gate-bytes", server.DefaultMaxGateBytes, "largest body POST /api/v1/gate accepts")
	fl.IntVar(&f.maxAuditBatchBytes, "max-audit-batch-bytes", server.DefaultMaxAuditBatchBytes, "largest audit webhook batch POST /api/v1/audit/{cluster} accepts (the API server's 400 events at Metadata level are under 500 KB)")
	fl.StringVar(&f.publishDir, "publish-dir", "", "directory of signed bundles (*.tar.gz) the server evaluates with and serves at /bundles/{name} to agents holding an ingest token; needs --verification-key, looked at again every --bundle-poll-min-delay")
	fl.StringVar(&f.pathPrefix, "path-prefix", "", "serve every route (API, /healthz, /bundles, dashboard) under this path, as /upgradescope behind an Ingress; nothing answers outside it")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "extra Host names this server answers to on loopback (repeatable, or $"+envAllowedHosts+")")
	fl.StringVar(&f.tlsCertFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (re-read when it changes)")
	fl.StringVar(&f.tlsKeyFile, "tls-key-file", "", "the certificate's PEM private key")
	fl.DurationVar(&f.drain, "drain", 10*time.Second, "how long a stop waits for requests in flight")
	f.bundles.register(cmd)
	f.poll.register(cmd)
	f.notify.register(cmd)
	fl.StringVar(&f.logFormat, "log-format", "text", "log lines as "+strings.Join(logging.Formats, " or "))
	fl.StringVar(&f.logLevel, "log-level", "info", strings.Join(logging.Levels, ", "))
	completeValues(cmd, "log-format", logging.Formats...)
	completeValues(cmd, "log-level", logging.Levels...)
	deprecatedAlias(cmd, "targets", "target")
	return cmd
}

// serveConfig is everything run needs, checked before anything is opened.
type serveConfig struct {
	cfg       server.Config
	retention time.Duration
	loopback  bool
	anonymous bool
}

func (f *serveFlags) check() (*serveConfig, error) {
	sc := &serveConfig{anonymous: f.allowAnonymousRead}
	var err error
	if (f.tlsCertFile == "") != (f.tlsKeyFile == "") {
		return nil, fmt.Errorf("--tls-cert-file and --tls-key-file go together: give both or neither")
	}
	if f.allowAnonymousRead && f.requireReadCredential {
		return nil, fmt.Errorf("--allow-anonymous-read and --require-read-credential contradict each other: give one")
	}
	if sc.loopback, err = loopbackListen(f.listen); err != nil {
		return nil, err
	}
	if sc.retention, err = parseRetention(f.retention); err != nil {
		return nil, err
	}
	if f.maxSnapshotBytes < 1024 {
		return nil, fmt.Errorf("--max-snapshot-bytes %d: want at least 1024", f.maxSnapshotBytes)
	}
	c := &sc.cfg
	if f.maxGateBytes < 1024 {
		return nil, fmt.Errorf("--max-gate-bytes %d: want at least 1024", f.maxGateBytes)
	}
	if f.maxAuditBatchBytes < 1024 {
		return nil, fmt.Errorf("--max-audit-batch-bytes %d: want at least 1024", f.maxAuditBatchBytes)
	}
	c.Targets, c.StaleAfter, c.MaxSnapshotBytes, c.MaxGateBytes = f.targets, f.staleAfter, f.maxSnapshotBytes, f.maxGateBytes
	c.MaxAuditBatchBytes = f.maxAuditBatchBytes
	// Below one cluster an hour the pass would never finish, and the wait between two
	// clusters overflows a Duration long before a rate reaches zero.
	if !(f.reevaluateRate >= 1.0/3600) || math.IsInf(f.reevaluateRate, 0) {
		return nil, fmt.Errorf("--reevaluate-rate %v: want clusters a second, at least 1/3600 (one an hour)", f.reevaluateRate)
	}
	c.ReevaluateRate = f.reevaluateRate
	if f.publishDir != "" {
		if err := f.checkPublishDir(); err != nil {
			return nil, err
		}
		c.PublishDir = f.publishDir
	}
	if c.PathPrefix, err = server.NormalPathPrefix(f.pathPrefix); err != nil {
		return nil, fmt.Errorf("--path-prefix: %w", err)
	}
	c.RequireReadCredential = f.requireReadCredential
	if c.IngestToken, err = f.ingest.value("ingest-token"); err != nil {
		return nil, err
	}
	if c.ReadToken, err = f.read.value("read-token"); err != nil {
		return nil, err
	}
	if c.AdminToken, err = f.admin.value("admin-token"); err != nil {
		return nil, err
	}
	if err := distinctTokens(c.IngestToken, c.ReadToken, c.AdminToken); err != nil {
		return nil, err
	}
	if c.Hosts, err = allowedHosts(f.allowedHosts); err != nil {
		return nil, err
	}
	if c.Sinks, err = f.notify.sinks(); err != nil {
		return nil, err
	}
	if c.PublicURL, err = f.notify.dashboardURL(); err != nil {
		return nil, err
	}
	c.HostCheck = sc.loopback
	if f.teamMap != "" {
		if c.TeamMap, err = server.LoadTeamMap(f.teamMap); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// checkPublishDir refuses a publish directory the server could not evaluate with: it
// never evaluates with a bundle it has not verified.
func (f *serveFlags) checkPublishDir() error {
	if info, err := os.Stat(f.publishDir); err != nil || !info.IsDir() {
		return fmt.Errorf("--publish-dir %s: want a directory of bundles", f.publishDir)
	}
	if f.bundles.keyFile == "" {
		return fmt.Errorf("--publish-dir %s: the server evaluates with the bundles it publishes and verifies them first; pass --verification-key (the public key agents verify them with)", f.publishDir)
	}
	return f.poll.checkDelays()
}

// distinctTokens refuses one token in two roles: a leaked read token must not push.
func distinctTokens(ingest, read, admin string) error {
	names := []string{"--ingest-token", "--read-token", "--admin-token"}
	vals := []string{ingest, read, admin}
	for i := range vals {
		for j := i + 1; j < len(vals); j++ {
			if vals[i] != "" && vals[i] == vals[j] {
				return fmt.Errorf("%s and %s must differ", names[i], names[j])
			}
		}
	}
	return nil
}

// loopbackListen answers whether addr binds only loopback (loopback.Is).
func loopbackListen(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return false, fmt.Errorf("--listen %q: the port must be a number", addr)
	}
	return loopback.Is(host), nil
}

// parseRetention reads --retention: whole days as "90d", or a Go duration; 0 keeps all.
func parseRetention(s string) (time.Duration, error) { return parseDays("retention", s, 90) }

// allowedHosts reads --allowed-host and $UPGRADESCOPE_ALLOWED_HOSTS: bare names or IPs.
func allowedHosts(flag []string) ([]string, error) {
	all := flag
	if env := os.Getenv(envAllowedHosts); env != "" {
		all = append(all, strings.Split(env, ",")...)
	}
	var out []string
	for _, h := range all {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, ":/*") && net.ParseIP(h) == nil {
			return nil, fmt.Errorf("--allowed-host %q: give a bare host name or IP, without scheme, port or wildcard", h)
		}
		out = append(out, strings.ToLower(h))
	}
	return out, nil
}

// run serves until SIGINT or SIGTERM, then drains (server.Process); a second signal ends
// the process at once.
func (f *serveFlags) run(ctx context.Context, s streams) error {
	sc, err := f.check()
	if err != nil {
		return err
	}
	log, err := logging.New(s.err, f.logFormat, f.logLevel)
	if err != nil {
		return fmt.Errorf("--log-format/--log-level: %w", err)
	}
	sc.cfg.Logger = log
	tuneGCForServe()
	p, err := f.process(ctx, s, sc)
	if err != nil {
		return err
	}
	openCtx, cancel := context.WithTimeout(ctx, dbTimeout)
	st, err := f.db.open(openCtx)
	cancel()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := f.guardReads(ctx, st, sc); err != nil {
		return err
	}
	p.Config.Store = st
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal, mid-drain, ends the process at once
	return p.Run(ctx, ln)
}

// process is the server the flags describe, on the embedded bundles and every --bundle,
// polling --bundle-url and --publish-dir; its store is yet to be opened.
func (f *serveFlags) process(ctx context.Context, s streams, sc *serveConfig) (*server.Process, error) {
	set, err := f.bundles.bundleSet(ctx)
	if err != nil {
		return nil, err
	}
	pollOpts, err := f.poll.options(&f.bundles, set)
	if err != nil {
		return nil, err
	}
	if sc.cfg.Verification, err = f.bundles.verification(); err != nil {
		return nil, err
	}
	return &server.Process{Config: sc.cfg, Bundles: set, Poll: pollOpts, PublishEvery: f.poll.minDelay,
		Observed: observer(sc.cfg.Logger, set), Retention: sc.retention, Drain: f.drain,
		TLSCertFile: f.tlsCertFile, TLSKeyFile: f.tlsKeyFile,
		// The URL ends in the path prefix: it is where the dashboard is and what agents push to.
		Listening: func(url string) { fmt.Fprintf(s.err, "listening on %s\n", url) },
	}, nil
}

// guardReads refuses an open read API on an address other than loopback. The database is
// opened first: a read token minted there is a credential.
func (f *serveFlags) guardReads(ctx context.Context, st store.Store, sc *serveConfig) error {
	if sc.cfg.IngestToken != "" {
		if toks, err := st.Tokens(ctx); err == nil && len(toks) > 0 {
			sc.cfg.Logger.Warn("both the shared --ingest-token and per-cluster tokens push: the shared one may push as any cluster")
		}
	}
	if sc.loopback || sc.anonymous || sc.cfg.ReadToken != "" || sc.cfg.RequireReadCredential {
		return nil
	}
	closed, err := st.ReadAPIClosed(ctx)
	if err != nil {
		return err
	}
	if closed {
		return nil
	}
	return fmt.Errorf("refusing to serve the read API without a read credential on %s, which is not a loopback address: "+
		"set a read token (--read-token), mint one (upgradescope tokens create --read --teams '*'), listen on loopback "+
		"(--listen 127.0.0.1:8080), or allow anonymous reads (--allow-anonymous-read)", f.listen)
}
