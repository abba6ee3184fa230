package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/report"
)

// mcpFlags are upgradescope mcp's flags: what the tools may read, fixed at start.
type mcpFlags struct {
	root          string
	http          string
	allowRemote   bool
	httpToken     tokenFlag
	allowedHosts  []string
	noCluster     bool
	live          liveFlags
	teamLabel     string
	filesMaxMiB   int
	policies      []string
	configPath    string
	bundles       bundleFlags
	server        string
	serverCA      string
	readToken     tokenFlag
	maxConcurrent int
	now           string
}

func newMCPCommand(s streams) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR]",
		Short: "Answer AI assistants over the Model Context Protocol: read-only readiness tools, small paged answers",
		Long: `mcp serves upgradescope's tools to an AI assistant over the Model Context Protocol, on stdio
(the assistant starts it) or, with --http, as streamable HTTP at /mcp. The tools only read:
manifests and inventory files under --root, the cluster of the kubeconfig context chosen at
start, and a fleet server with a read token. Every answer is at most 4 KB and names the bundle
revisions it was judged with; the rest is paged. See docs/mcp.md.`,
		Example: `  upgradescope mcp --root ~/src/platform
  upgradescope mcp --http 8765 --root . --policy ./my-rules
  upgradescope mcp --server https://fleet.example.com --read-token-file read.token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), s) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", ".", "directory manifests and inventory files are read under; nothing outside it is read")
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP at http://ADDR/mcp instead of stdio (a bare port binds 127.0.0.1)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "let --http bind an address other than loopback (needs --http-token)")
	f.httpToken.register(cmd, "http-token", "UPGRADESCOPE_MCP_TOKEN", "bearer token every --http request must carry; required off loopback")
	fl.StringArrayVar(&f.allowedHosts, "allowed-host", nil, "host name --http answers to besides localhost and its own address (repeatable), as serve's")
	fl.BoolVar(&f.noCluster, "no-cluster", false, "offer no cluster to scan, even when a kubeconfig is found")
	f.live.register(cmd)
	f.live.registerTimeout(cmd)
	fl.StringVar(&f.teamLabel, "team-label", "team", "Namespace label whose value names the team that owns it")
	fl.IntVar(&f.filesMaxMiB, "files-max-mib", files.DefaultMaxBytes>>20, "MiB of manifests one scan reads in all; files past it are not read and the verdict is unknown")
	fl.StringArrayVar(&f.policies, "policy", nil, "custom rule pack: a directory or bundle .tar.gz rooted at upgradescope/custom/<name> (repeatable)")
	fl.StringVar(&f.configPath, "config", "", "suppression file applied to every scan, read at start (default: .upgradescope.yaml beside what a scan reads, else at --root)")
	f.bundles.register(cmd)
	fl.StringVar(&f.server, "server", "", "a fleet server's http(s) URL, for fleet_summary, fleet_findings, dry_run_bundle and fleet clusters")
	fl.StringVar(&f.serverCA, "server-ca-file", "", "PEM bundle trusted for an https --server, besides the system roots")
	f.readToken.register(cmd, "read-token", "UPGRADESCOPE_READ_TOKEN", "with --server: a read token; the fleet tools see what it is scoped to")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", 2, "tool calls run at once; more wait their turn")
	fl.StringVar(&f.now, "now", "", "evaluation clock as RFC 3339 (default: the current time); pins answers in tests")
	_ = fl.MarkHidden("now")
	return cmd
}

func (f *mcpFlags) run(ctx context.Context, s streams) error {
	addr, err := f.listenAddr()
	if err != nil {
		return err
	}
	token, err := f.httpToken.value("http-token")
	if err != nil {
		return err
	}
	if token == "" && f.httpToken.file != "" {
		// An unmounted Secret must not turn the check off.
		return fmt.Errorf("--http-token-file %s holds no token", f.httpToken.file)
	}
	if addr != "" && !loopback.Is(addr) && token == "" {
		return fmt.Errorf("--http %s is reachable from other machines: pass --http-token-file with a bearer token", f.http)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	tuneGCForServe()
	cfg, err := f.config(ctx, s)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return err
	}
	if addr == "" {
		return srv.RunStdio(ctx, io.NopCloser(s.in), nopWriteCloser{s.out})
	}
	return serveMCP(ctx, s, addr, srv.Handler(mcpserver.HTTPOptions{Token: token, Hosts: f.allowedHosts}))
}

// listenAddr reads --http: "" for stdio, a bare port ("8765" or ":8765") on 127.0.0.1, and
// an address off loopback only with --allow-remote.
func (f *mcpFlags) listenAddr() (string, error) {
	if f.http == "" {
		if f.allowRemote {
			return "", errors.New("--allow-remote applies to --http")
		}
		return "", nil
	}
	addr := f.http
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--http %q: want a port or HOST:PORT, e.g. 8765 or 127.0.0.1:8765", f.http)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--http %q: the port must be a number", f.http)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !loopback.Is(host) && !f.allowRemote {
		return "", fmt.Errorf("--http %q binds beyond this machine: pass --allow-remote (and --http-token-file), or a bare port for 127.0.0.1", f.http)
	}
	return net.JoinHostPort(host, port), nil
}

// config loads what the server's tools read: the engine, the suppressions, the cluster of
// the context chosen now, and the fleet client.
func (f *mcpFlags) config(ctx context.Context, s streams) (mcpserver.Config, error) {
	now, err := parseNow(f.now)
	if err != nil {
		return mcpserver.Config{}, err
	}
	clock := time.Now
	if f.now != "" {
		clock = func() time.Time { return now }
	}
	if f.filesMaxMiB < 0 {
		return mcpserver.Config{}, fmt.Errorf("--files-max-mib %d: must not be negative", f.filesMaxMiB)
	}
	jf := judgeFlags{policies: f.policies, configPath: f.configPath, bundles: f.bundles, quiet: true}
	eng, err := jf.newEngine(ctx, newProgress(s, true))
	if err != nil {
		return mcpserver.Config{}, withLimitFlag(err)
	}
	rules, source, err := f.suppressions()
	if err != nil {
		return mcpserver.Config{}, err
	}
	cfg := mcpserver.Config{
		Engine: eng, Root: f.root, Ignore: rules, IgnoreSource: source, FindIgnore: f.configPath == "",
		Files:         mcpserver.FilesBudget{MaxBytes: int64(f.filesMaxMiB) << 20, Timeout: f.live.timeout, TeamLabel: f.teamLabel},
		MaxConcurrent: f.maxConcurrent, Now: clock, Version: version,
	}
	if cfg.Cluster, cfg.ClusterName, err = f.cluster(s, eng, clock); err != nil {
		return mcpserver.Config{}, err
	}
	if f.server != "" {
		if cfg.Fleet, err = fleetClient(s, f.server, f.serverCA, f.readToken, "read-token"); err != nil {
			return mcpserver.Config{}, err
		}
	}
	return cfg, nil
}

// cluster is the collection of the kubeconfig context chosen now (--context, else the
// current one), pinned by name so a later "kubectl config use-context" does not move it;
// nil, with a note, when there is none.
func (f *mcpFlags) cluster(s streams, eng *engine.Engine, clock func() time.Time) (func(context.Context) (*inventory.Document, error), string, error) {
	if f.noCluster {
		return nil, "", nil
	}
	loader, _, err := f.live.restConfig("")
	if err != nil {
		if f.live.context != "" || f.live.kubeconfig != "" {
			return nil, "", err
		}
		fmt.Fprintln(s.err, "upgradescope mcp: note: no cluster to offer (no kubeconfig); scan reads files only")
		return nil, "", nil
	}
	if f.live.context == "" {
		raw, err := loader.RawConfig()
		if err != nil {
			return nil, "", fmt.Errorf("load kubeconfig: %w", err)
		}
		f.live.context = raw.CurrentContext
	}
	live := f.live
	collect := func(ctx context.Context) (*inventory.Document, error) {
		doc, _, err := live.collectLive(ctx, s, newProgress(s, true), eng, f.teamLabel, clock().UTC())
		return doc, err
	}
	return collect, live.context, nil
}

// suppressions loads --config, once, at start; without it the server looks for
// .upgradescope.yaml beside what each scan reads, else at --root (Config.FindIgnore).
func (f *mcpFlags) suppressions() ([]report.IgnoreRule, string, error) {
	if f.configPath == "" {
		return nil, "", nil
	}
	c, err := config.Load(filepath.Clean(f.configPath))
	if err != nil {
		return nil, "", err
	}
	return c.Ignore, c.Path, nil
}

// serveMCP listens on addr and serves h until ctx ends, then drains for up to 10 s.
func serveMCP(ctx context.Context, s streams, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(s.err, "upgradescope mcp: serving http://%s%s\n", ln.Addr(), mcpserver.Path)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
