package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
)

// liveFlags choose the cluster a scan reads.
type liveFlags struct {
	kubeconfig     string
	context        string
	requestTimeout time.Duration
	countRequests  bool
	timeout        time.Duration
	kubeletConfigz bool
	// values, when set, receives the values collected beside the inventory (the chart
	// advisor's), and the Flux HelmRepositories' URLs are read for it.
	values *charts.Values
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)")
	cmd.Flags().StringVar(&f.context, "context", "", "kubeconfig context (default: the current one)")
	cmd.Flags().DurationVar(&f.requestTimeout, "request-timeout", cluster.DefaultRequestTimeout, "limit for one API request; each collector step gets twice this")
	cmd.Flags().BoolVar(&f.kubeletConfigz, "kubelet-configz", false, "read a few nodes' kubelet configuration through the API server's node proxy (needs get on nodes/proxy, which reaches the kubelet's API)")
	cmd.Flags().BoolVar(&f.countRequests, "count-requests", false, "print how many API requests the collection made (for make bench-live)")
	_ = cmd.Flags().MarkHidden("count-requests")
	_ = cmd.RegisterFlagCompletionFunc("context", f.completeContexts)
}

// completeContexts offers the contexts of the kubeconfig a scan would read, as kubectl does.
func (f *liveFlags) completeContexts(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence}
	cfg, err := rules.Load()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]cobra.Completion, 0, len(cfg.Contexts))
	for name := range cfg.Contexts {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}

// registerTimeout adds --timeout, the budget of a one-shot live collection (scan,
// inventory); the agent's budget follows its --interval instead.
func (f *liveFlags) registerTimeout(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "limit for the whole collection, of a cluster or of --files; what it could not finish is not assessed")
}

// liveTarget is what the report header says about the cluster read.
type liveTarget struct {
	context, server string
}

// collectLive reads the cluster of the chosen context within --timeout, showing each step on
// rep. A cluster whose version cannot be read at all is an error: nothing else could be
// trusted.
func (f *liveFlags) collectLive(ctx context.Context, s streams, rep *progress.Reporter, eng *engine.Engine, teamLabel string, now time.Time) (*inventory.Document, liveTarget, error) {
	if f.timeout <= 0 {
		return nil, liveTarget{}, fmt.Errorf("--timeout %s: want a positive duration", f.timeout)
	}
	loader, cfg, err := f.restConfig(", or --files PATH to judge rendered manifests instead")
	if err != nil {
		return nil, liveTarget{}, err
	}
	var requests atomic.Int64
	if f.countRequests {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
		defer func() { fmt.Fprintf(os.Stderr, "api requests: %d\n", requests.Load()) }()
	}
	target := liveTarget{context: f.context, server: serverOnly(cfg.Host)}
	if raw, err := loader.RawConfig(); err == nil && target.context == "" {
		target.context = raw.CurrentContext
	}
	col, err := cluster.New(cfg)
	if err != nil {
		return nil, target, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	opts := f.collectOptions(eng, teamLabel)
	opts.Progress = showStep(rep)
	doc := col.Collect(ctx, now, opts)
	if f.values != nil {
		col.ResolveHelmRepositories(ctx, doc)
		*f.values = charts.Values{Helm: col.ReleaseValues(), GitOps: col.GitOpsValues(),
			Credentials: charts.NewCredentials(col.GitOpsCredentials())}
	}
	v := doc.Capabilities[inventory.CapVersions]
	// client-go's rate limiter refuses a request whose wait would pass the deadline before the
	// deadline has passed: that is the budget running out too.
	spent := errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(v.Reason, "would exceed context deadline")
	if !v.Available {
		if spent {
			return nil, target, fmt.Errorf("the live collection of %s did not finish within --timeout %s (%s): raise --timeout", target.server, f.timeout, v.Reason)
		}
		return nil, target, fmt.Errorf("cannot read the cluster at %s: %s", target.server, v.Reason)
	}
	if spent {
		fmt.Fprintf(s.err, "warning: the live collection ran out of --timeout %s; what it could not finish is not assessed (raise --timeout)\n", f.timeout)
	}
	return doc, target, nil
}

// showStep shows the collector's steps on rep: "[3/8] api-usage: 12 objects at flagged
// APIs", or what kept the step from seeing everything.
func showStep(rep *progress.Reporter) func(cluster.Step) {
	return func(s cluster.Step) {
		if !s.Done {
			rep.Start(fmt.Sprintf("[%d/%d] %s", s.Index, s.Total, s.Name))
			return
		}
		found := fmt.Sprintf("%d %s", s.Found, s.Unit)
		switch c := s.Capability; {
		case c != nil && !c.Available:
			found = "not assessed: " + c.Reason
		case c != nil && c.Partial:
			found += " (partial: " + c.Reason + ")"
		}
		rep.Done(found)
	}
}

// restConfig loads the chosen kubeconfig context (or the in-cluster config). Without either,
// the error says what to pass, ending with otherwise: what else the command can do.
func (f *liveFlags) restConfig(otherwise string) (clientcmd.ClientConfig, *rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) || f.context != "" && noKubeconfig(rules) {
			// client-go says "try setting KUBERNETES_MASTER", which nobody should.
			return nil, nil, fmt.Errorf("no cluster to read: no kubeconfig at %s, and not running in a pod: pass --kubeconfig FILE and --context NAME%s",
				strings.Join(rules.GetLoadingPrecedence(), " or "), otherwise)
		}
		return nil, nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.Timeout = f.requestTimeout
	cfg.UserAgent = cluster.UserAgent(version)
	return loader, cfg, nil
}

// noKubeconfig is true when no file the rules would read exists.
func noKubeconfig(rules *clientcmd.ClientConfigLoadingRules) bool {
	if rules.ExplicitPath != "" {
		return false
	}
	for _, p := range rules.GetLoadingPrecedence() {
		if _, err := os.Stat(p); err == nil {
			return false
		}
	}
	return true
}

// collectOptions are the collector options a live scan and the agent share.
func (f *liveFlags) collectOptions(eng *engine.Engine, teamLabel string) cluster.Options {
	return cluster.Options{
		Flagged: flagged(eng), TeamLabel: teamLabel, StepTimeout: 2 * f.requestTimeout,
		Observe: eng.Observe(), KubeletConfigz: f.kubeletConfigz,
	}
}

func flagged(eng *engine.Engine) []cluster.FlaggedKind {
	var out []cluster.FlaggedKind
	for _, a := range eng.KB().FlaggedAPIs() {
		g, v, k := a.ReplacementGVK()
		out = append(out, cluster.FlaggedKind{
			Group: a.Group, Version: a.Version, Kind: a.Kind, Removed: a.Removed,
			Replacement: schema.GroupVersionKind{Group: g, Version: v, Kind: k},
		})
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// serverOnly keeps scheme, host and port: never a path, query or credentials.
func serverOnly(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
