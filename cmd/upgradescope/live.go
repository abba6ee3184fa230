package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// liveFlags choose the cluster a scan reads.
type liveFlags struct {
	kubeconfig     string
	context        string
	requestTimeout time.Duration
	countRequests  bool
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)")
	cmd.Flags().StringVar(&f.context, "context", "", "kubeconfig context (default: the current one)")
	cmd.Flags().DurationVar(&f.requestTimeout, "request-timeout", cluster.DefaultRequestTimeout, "limit for one API request; each collector step gets twice this")
	cmd.Flags().BoolVar(&f.countRequests, "count-requests", false, "print how many API requests the collection made (for make bench-live)")
	_ = cmd.Flags().MarkHidden("count-requests")
}

// scanBudget bounds a whole live collection; each step also has its own deadline.
const scanBudget = 5 * time.Minute

// liveTarget is what the report header says about the cluster read.
type liveTarget struct {
	context, server string
}

// collectLive reads the cluster of the chosen context. A cluster whose version cannot be read
// at all is an error: nothing else could be trusted.
func (f *liveFlags) collectLive(ctx context.Context, eng *engine.Engine, teamLabel string, now time.Time) (*inventory.Document, liveTarget, error) {
	loader, cfg, err := f.restConfig()
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
	ctx, cancel := context.WithTimeout(ctx, scanBudget)
	defer cancel()
	doc := col.Collect(ctx, now, f.collectOptions(eng, teamLabel))
	if v := doc.Capabilities[inventory.CapVersions]; !v.Available {
		return nil, target, fmt.Errorf("cannot read the cluster at %s: %s", target.server, v.Reason)
	}
	return doc, target, nil
}

// restConfig loads the chosen kubeconfig context (or the in-cluster config).
func (f *liveFlags) restConfig() (clientcmd.ClientConfig, *rest.Config, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{CurrentContext: f.context},
	)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.Timeout = f.requestTimeout
	return loader, cfg, nil
}

// collectOptions are the collector options a live scan and the agent share.
func (f *liveFlags) collectOptions(eng *engine.Engine, teamLabel string) cluster.Options {
	return cluster.Options{
		Flagged: flagged(eng), TeamLabel: teamLabel, StepTimeout: 2 * f.requestTimeout,
		Manifest: files.Options{Watched: eng.WatchedKinds(), Known: eng.KnownKinds(), BuiltinGroups: eng.BuiltinGroups()},
		Images:   eng.ImageWatch(),
	}
}

func flagged(eng *engine.Engine) []cluster.FlaggedKind {
	var out []cluster.FlaggedKind
	for _, a := range eng.FlaggedAPIs() {
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
