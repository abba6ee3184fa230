package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/agent"
	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/internal/listen"
	"github.com/upgradescope/upgradescope/internal/logging"
	"github.com/upgradescope/upgradescope/internal/token"
	"github.com/upgradescope/upgradescope/inventory"
)

type agentFlags struct {
	live       liveFlags
	charts     chartFlags
	audit      auditFlags
	interval   time.Duration
	targets    []string
	crName     string
	teamLabel  string
	manageCRD  bool
	healthAddr string
	// testInterval replaces --interval below its minimum, for the end-to-end test only.
	testInterval time.Duration

	serverURL, serverToken, serverTokenFile, serverCAFile, clusterName string
	forceSyncEvery                                                     time.Duration

	logFormat, logLevel string
	podPassEvery        int

	bundles bundleFlags
	poll    pollFlags
}

func newAgentCommand(s streams) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Keep a ClusterReadiness object's status current, on a polling tick",
		Example: `  upgradescope agent                       # in-cluster, ClusterReadiness "cluster"
  upgradescope agent --target 1.37,1.38 --interval 5m
  upgradescope agent --audit-log /var/log/kubernetes/audit   # the API server's log, mounted
  kubectl get ucr`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return withLimitFlag(f.run(cmd.Context(), s)) },
	}
	cmd.Flags().DurationVar(&f.interval, "interval", 10*time.Minute, "time between ticks (±10% jitter); at least 1m")
	cmd.Flags().StringSliceVar(&f.targets, "target", nil, "target minors, comma-separated or repeated; when set the agent owns spec.targets and resets it every tick")
	cmd.Flags().StringVar(&f.crName, "cr-name", crd.DefaultName, "name of the ClusterReadiness object")
	cmd.Flags().StringVar(&f.teamLabel, "team-label", "team", "Namespace label whose value names the team that owns it")
	cmd.Flags().BoolVar(&f.manageCRD, "manage-crd", true, "server-side apply the ClusterReadiness CRD at start (only the fields the agent owns)")
	cmd.Flags().StringVar(&f.healthAddr, "health-addr", "127.0.0.1:8081", "address for /healthz and /readyz; empty disables (use :8081 in a pod)")
	cmd.Flags().DurationVar(&f.testInterval, "test-interval", 0, "tick interval below the minimum, for tests")
	_ = cmd.Flags().MarkHidden("test-interval")
	cmd.Flags().StringVar(&f.serverURL, "server", "", "fleet server's http(s) URL to push inventories to (empty: ClusterReadiness only)")
	cmd.Flags().StringVar(&f.serverToken, "ingest-token", "", "ingest token (default $UPGRADESCOPE_SERVER_TOKEN); prefer --ingest-token-file")
	cmd.Flags().StringVar(&f.serverTokenFile, "ingest-token-file", "", "file holding the ingest token, re-read on every push")
	cmd.Flags().StringVar(&f.serverCAFile, "server-ca-file", "", "PEM bundle trusted for an https --server, besides the system roots")
	cmd.Flags().StringVar(&f.clusterName, "cluster-name", "", "name pushed to the server (default: the kube-system namespace UID)")
	cmd.Flags().DurationVar(&f.forceSyncEvery, "force-sync-every", time.Hour, "push even an unchanged inventory after this long")
	cmd.Flags().IntVar(&f.podPassEvery, "pod-pass-every", 3, "list pods on one tick in N and reuse their images in between; a Helm or GitOps chart change forces the next pass (1: every tick)")
	cmd.Flags().StringVar(&f.logFormat, "log-format", "text", "log lines as "+strings.Join(logging.Formats, " or "))
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", strings.Join(logging.Levels, ", "))
	f.charts.register(cmd)
	f.audit.register(cmd, false)
	completeValues(cmd, "log-format", logging.Formats...)
	completeValues(cmd, "log-level", logging.Levels...)
	f.bundles.register(cmd)
	f.poll.register(cmd)
	f.live.register(cmd)
	deprecatedAlias(cmd, "targets", "target")
	deprecatedAlias(cmd, "server-url", "server")
	deprecatedAlias(cmd, "server-token", "ingest-token")
	deprecatedAlias(cmd, "server-token-file", "ingest-token-file")
	return cmd
}

func (f *agentFlags) run(ctx context.Context, s streams) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	if opts.Log, err = logging.New(s.err, f.logFormat, f.logLevel); err != nil {
		if errors.Is(err, logging.ErrLevel) {
			return fmt.Errorf("--log-level: %w", err)
		}
		return fmt.Errorf("--log-format: %w", err)
	}
	policy, err := f.bundles.bundleSet(ctx)
	if err != nil {
		return err
	}
	// Every flag is checked before the cluster is touched.
	pollOpts, err := f.poll.options(&f.bundles, policy)
	if err != nil {
		return err
	}
	pusher, err := f.pusher(policy)
	if err != nil {
		return err
	}
	if opts.AdviseCharts, err = f.charts.forAgent(opts.Log); err != nil {
		return err
	}
	opts.Audit = f.audit.forAgent(opts.Log)
	col, dyn, err := f.clients(ctx)
	if err != nil {
		return err
	}
	opts.Collect = func(eng *engine.Engine) cluster.Options {
		o := f.live.collectOptions(eng, f.teamLabel)
		o.PodPassEvery = f.podPassEvery
		return o
	}
	a := agent.New(opts, col, policy, dyn)
	a.Pusher = pusher
	if a.Pusher != nil && a.Pusher.Warning != "" {
		opts.Log.Warn(a.Pusher.Warning)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	closeHealth, err := listen.Serve(f.healthAddr, a.Health.Handler())
	if err != nil {
		return fmt.Errorf("--health-addr: %w", err)
	}
	defer closeHealth()
	stopPolling, err := f.poll.start(ctx, opts.Log, policy, pollOpts)
	if err != nil {
		return err
	}
	defer stopPolling()
	opts.Log.Info("agent starting", "version", version, "interval", opts.Interval.String(), "crName", opts.Name, "targets", strings.Join(opts.Targets, ","))
	return a.Run(ctx)
}

// clients connect to the cluster and, with --manage-crd, apply the ClusterReadiness CRD.
func (f *agentFlags) clients(ctx context.Context) (*cluster.Collector, dynamic.Interface, error) {
	_, cfg, err := f.live.restConfig("; the agent is meant to run in a pod, with its service account (deploy/chart)")
	if err != nil {
		return nil, nil, err
	}
	col, err := cluster.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	if f.manageCRD {
		if err := crd.Apply(ctx, dyn); err != nil {
			return nil, nil, fmt.Errorf("%w (install deploy CRD crd/clusterreadiness.yaml, or grant the agent apply on customresourcedefinitions)", err)
		}
	}
	return col, dyn, nil
}

func (f *agentFlags) options() (agent.Options, error) {
	opts := agent.Options{Name: f.crName, Interval: f.interval, AgentVersion: version}
	if f.testInterval > 0 {
		opts.Interval = f.testInterval
	} else if f.interval < agent.MinInterval {
		return opts, fmt.Errorf("--interval %s is below the minimum %s", f.interval, agent.MinInterval)
	}
	if f.crName == "" {
		return opts, errors.New("--cr-name must not be empty")
	}
	if f.podPassEvery < 1 {
		return opts, fmt.Errorf("--pod-pass-every %d: want 1 or more", f.podPassEvery)
	}
	seen := map[string]bool{}
	for _, raw := range strings.Split(strings.Join(f.targets, ","), ",") {
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		t, err := inventory.ParseTarget(raw)
		if err != nil {
			return opts, fmt.Errorf("--target: %w", err)
		}
		if !seen[t] {
			seen[t] = true
			opts.Targets = append(opts.Targets, t)
		}
	}
	if len(opts.Targets) > crd.MaxTargets {
		return opts, fmt.Errorf("--target names %d minors; at most %d", len(opts.Targets), crd.MaxTargets)
	}
	return opts, nil
}

// pusher builds the fleet-server client, or nil without --server.
func (f *agentFlags) pusher(policy *policyset.Set) (*push.Client, error) {
	if f.serverURL == "" {
		return nil, nil
	}
	if f.forceSyncEvery <= 0 {
		return nil, errors.New("--force-sync-every must be positive")
	}
	tokens := token.Source{File: f.serverTokenFile, Literal: f.serverToken, Env: "UPGRADESCOPE_SERVER_TOKEN"}
	if _, err := tokens.Token(); err != nil {
		return nil, fmt.Errorf("--server needs a token without spaces: --ingest-token-file, --ingest-token or $UPGRADESCOPE_SERVER_TOKEN (%w)", err)
	}
	c, err := push.New(push.Options{URL: f.serverURL, Token: tokens.Token, CAFile: f.serverCAFile, ForceEvery: f.forceSyncEvery,
		ClusterName: f.clusterName, AgentVersion: version,
		Versions: func() (string, []push.Bundle) {
			eng, _ := policy.Engine() // one set for both, even while a new one activates
			var bundles []push.Bundle
			for _, b := range eng.Bundles() {
				bundles = append(bundles, push.Bundle{Name: b.Name, Revision: b.Revision})
			}
			return eng.KB().Meta().GeneratedFrom, bundles
		}})
	if err != nil {
		return nil, fmt.Errorf("--server/--server-ca-file: %w", err)
	}
	return c, nil
}
