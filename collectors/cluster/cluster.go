// Package cluster collects an inventory from a live cluster through client-go. It only
// reads, lists metadata where it can (probes read whole objects of the kinds they name), and
// turns every failure into a capability, or a probe's unavailability, that says what it could
// not see.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

// DefaultRequestTimeout bounds one API request.
const DefaultRequestTimeout = 30 * time.Second

// Collector reads one cluster.
//
// A Collector is meant to be kept between collections (the agent's ticks): it remembers
// decoded Helm releases by resourceVersion. It is not safe for concurrent Collect calls.
type Collector struct {
	config    *rest.Config
	client    kubernetes.Interface
	helmCache map[string]cachedRelease
	// selfListed are resources this collector listed at a deprecated version because no
	// other was served: their rows in the deprecated-API metric may be its own requests.
	selfListed map[schema.GroupVersionResource]bool
	// gitops remembers refused lists across ticks.
	gitops *gitops.Reader
	// pods is the last full pod pass, reused between passes; podProbes its Pods' probe
	// observations.
	pods      podPass
	podProbes *podProbes
	// manifestsUnread are the Helm manifest documents the last collection could not read.
	manifestsUnread []string
	// releaseValues are the user-supplied values of the releases the last Helm call read,
	// by "namespace/name": the chart advisor renders with them. Never in the inventory.
	releaseValues map[string]map[string]any
	// gitopsValues are what the last GitOps call read of the values GitOps objects declare.
	gitopsValues map[string]gitops.ChartValues
	// gitopsCreds are the repository credentials the last ResolveHelmRepositories read.
	gitopsCreds []gitops.RepositoryCredential
}

// UserAgent is the user agent of upgradescope's requests at version (the binary's, as
// `upgradescope version` reports it): "upgradescope/v0.1.0 (linux/amd64) collector". The
// audit-log reader tells the scan's own reads of deprecated APIs by its "upgradescope/"
// prefix; client-go's default is built from the binary's file name, which may be anything.
func UserAgent(version string) string {
	return "upgradescope/" + version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ") collector"
}

// New builds a collector for cfg; cfg.Timeout defaults to DefaultRequestTimeout, and
// cfg.UserAgent to UserAgent("dev").
func New(cfg *rest.Config) (*Collector, error) {
	c := rest.CopyConfig(cfg)
	if c.Timeout == 0 {
		c.Timeout = DefaultRequestTimeout
	}
	// A scan makes a request per page and per Helm release: a few hundred. client-go's
	// defaults (5/s) would make it wait minutes; the server's own priority and fairness still
	// protects it.
	if c.QPS == 0 {
		c.QPS, c.Burst = 200, 400
	}
	if c.UserAgent == "" {
		c.UserAgent = UserAgent("dev")
	}
	// Deprecation warnings for the scanner's own reads (kinds with no other served version)
	// say nothing to the user; findings do.
	c.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return &Collector{config: c, client: client, helmCache: map[string]cachedRelease{}, selfListed: map[schema.GroupVersionResource]bool{}}, nil
}

// unavailable turns a step's error into its capability; forbidden says so plainly.
func unavailable(step string, err error) inventory.Capability {
	reason := fmt.Sprintf("%s: %v", step, err)
	switch {
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		reason = fmt.Sprintf("%s: forbidden: %v", step, err)
	case errors.Is(err, context.DeadlineExceeded):
		reason = fmt.Sprintf("%s: timed out", step)
	}
	return inventory.Capability{Available: false, Reason: reason}
}
