package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/upgradescope/upgradescope/inventory"
)

// Bounds of reading kubelet configurations.
const (
	// MaxConfigzNodes is how many nodes' kubelet configuration a collection reads: one per
	// kubelet version and OS image, in that order, up to this many.
	MaxConfigzNodes = 8
	// configzConcurrency is how many configz requests run at once.
	configzConcurrency = 4
	// ConfigzTimeout bounds one configz request (the API server proxies it to the kubelet).
	ConfigzTimeout = 10 * time.Second
	// maxConfigzBytes bounds one configz answer; a kubelet's is a few KiB.
	maxConfigzBytes = 1 << 20
)

// kubeletConfigOff is the reason kubelet-config gives when reading it was not asked for.
const kubeletConfigOff = "not read: the kubelet's configuration comes from its configz endpoint through the API server's node proxy, " +
	"which needs get on nodes/proxy (access to the kubelet's API); pass --kubelet-configz (chart: rbac.kubeletConfigz) to read it"

// kubeletConfig reads the kubelet configuration of a few nodes from /configz through the API
// server's node proxy (GET /api/v1/nodes/<node>/proxy/configz, answered as
// {"kubeletconfig": <KubeletConfiguration v1beta1 without its kind>}: kubernetes
// cmd/kubelet/app/server.go, setConfigz), when enabled. The recorder makes configurations
// read alike one component naming their nodes. A node that fails is skipped, saying why;
// when none answers the capability is unavailable (kubelet-config is optional).
func (c *Collector) kubeletConfig(ctx context.Context, p *preflightPass, enabled bool) inventory.Capability {
	switch {
	case !enabled:
		return inventory.Capability{Available: false, Reason: kubeletConfigOff}
	case p.nodes == nil:
		return inventory.Capability{Available: false, Reason: "not read: the nodes could not be listed"}
	case len(p.configzNodes) == 0 && p.nodes.Examined == 0:
		return inventory.Capability{Available: true, Reason: "no nodes"}
	case len(p.configzNodes) == 0:
		return inventory.Capability{Available: false, Reason: "not read: no node is Ready to answer"}
	}
	read := 0
	var skipped []string
	var firstErr error
	for _, r := range c.readConfigz(ctx, p.configzNodes) {
		if r.err != nil {
			skipped = append(skipped, r.node+": "+r.err.Error())
			firstErr = cmpErr(firstErr, r.err)
			continue
		}
		p.rec.ObserveKubeletConfigz(r.config, inventory.ObjectRef{Kind: "Node", Name: r.node})
		read++
	}
	p.counts[inventory.CapKubeletConfig] = read
	if read == 0 && isDenied(firstErr) {
		return access{verb: "get", resource: "nodes/proxy"}.unavailable(firstErr)
	}
	return configzRead(read, p.nodes.Examined, skipped)
}

// configzRead is kubelet-config once read nodes of all answered configz and the nodes in
// skipped did not: unavailable when none answered; partial, saying so, when some did not or
// when fewer nodes were read than the cluster has (the others' kubelets may be configured
// otherwise: a sample is one node per kubelet version and OS image).
func configzRead(read, all int, skipped []string) inventory.Capability {
	if read == 0 {
		return inventory.Capability{Available: false, Reason: "no kubelet answered configz: " + strings.Join(inventory.CapSkipped(skipped), "; ")}
	}
	c := inventory.Capability{Available: true, Reason: fmt.Sprintf("read %d of %d node(s), one per kubelet version and OS image", read, max(all, read))}
	if len(skipped) > 0 {
		c.Reason += fmt.Sprintf("; %d did not answer", len(skipped))
		c.Skipped = inventory.CapSkipped(skipped)
	}
	c.Partial = read < all || len(skipped) > 0
	return c
}

// cmpErr keeps a refusal over any other error: it names what to grant.
func cmpErr(kept, err error) error {
	if kept == nil || !isDenied(kept) && isDenied(err) {
		return err
	}
	return kept
}

type configzResult struct {
	node   string
	config map[string]any
	err    error
}

// readConfigz asks each node's kubelet for its configuration, configzConcurrency at a time,
// each within ConfigzTimeout; results are in the order of nodes.
func (c *Collector) readConfigz(ctx context.Context, nodes []string) []configzResult {
	results := make([]configzResult, len(nodes))
	var g errgroup.Group
	g.SetLimit(configzConcurrency)
	for i, node := range nodes {
		g.Go(func() error {
			cfg, err := c.configz(ctx, node)
			results[i] = configzResult{node: node, config: cfg, err: err}
			return nil // kept per node, as the result
		})
	}
	_ = g.Wait()
	return results
}

func (c *Collector) configz(ctx context.Context, node string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, ConfigzTimeout)
	defer cancel()
	body, err := c.client.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("configz").Stream(ctx)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("timed out after %s", ConfigzTimeout)
		}
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxConfigzBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read configz: %w", err)
	}
	if len(data) > maxConfigzBytes {
		return nil, fmt.Errorf("configz answered more than %d bytes", maxConfigzBytes)
	}
	var answer struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, fmt.Errorf("decode configz: %w", err)
	}
	if answer.KubeletConfig == nil {
		return nil, errors.New(`configz answered no "kubeletconfig"`)
	}
	return answer.KubeletConfig, nil
}
