package cluster

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/inventory"
)

// deprecatedMetric is the apiserver's count of requests to deprecated APIs.
const deprecatedMetric = "apiserver_requested_deprecated_apis"

// maxMetricsBytes bounds the /metrics payload.
const maxMetricsBytes = 64 << 20

// DeprecatedCalls reads apiserver_requested_deprecated_apis from /metrics. Managed control
// planes often forbid /metrics: that is a reason, not an error.
func (c *Collector) DeprecatedCalls(ctx context.Context, doc *inventory.Document) inventory.Capability {
	raw, err := c.client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return inventory.Capability{Available: false, Reason: "apiserver /metrics forbidden (managed control planes often block it): " + err.Error()}
		}
		return unavailable("get /metrics", err)
	}
	if len(raw) > maxMetricsBytes {
		return inventory.Capability{Available: false, Reason: fmt.Sprintf("/metrics larger than %d MiB", maxMetricsBytes>>20)}
	}
	calls, err := parseDeprecatedCalls(raw)
	if err != nil {
		return unavailable("parse /metrics", err)
	}
	// Rows for resources this scanner itself listed at a deprecated version (no other was
	// served) may be its own requests: they are left out, and said so.
	var skipped []string
	for _, call := range calls {
		gvr := schema.GroupVersionResource{Group: call.Group, Version: call.Version, Resource: call.Resource}
		if c.selfListed[gvr] && call.Subresource == "" {
			skipped = append(skipped, fmt.Sprintf("%s %s (listed by this scan)", gvr.GroupVersion(), call.Resource))
			continue
		}
		doc.DeprecatedCalls = append(doc.DeprecatedCalls, call)
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: "rows the scan's own requests may explain are left out", Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}

func parseDeprecatedCalls(raw []byte) ([]inventory.DeprecatedCall, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	family, ok := families[deprecatedMetric]
	if !ok {
		return nil, nil
	}
	var calls []inventory.DeprecatedCall
	for _, m := range family.GetMetric() {
		var call inventory.DeprecatedCall
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "group":
				call.Group = l.GetValue()
			case "version":
				call.Version = l.GetValue()
			case "resource":
				call.Resource = l.GetValue()
			case "subresource":
				call.Subresource = l.GetValue()
			case "removed_release":
				call.RemovedRelease = l.GetValue()
			}
		}
		calls = append(calls, call)
	}
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i], calls[j]
		return a.Group+"/"+a.Version+"/"+a.Resource+"/"+a.Subresource < b.Group+"/"+b.Version+"/"+b.Resource+"/"+b.Subresource
	})
	return calls, nil
}

func newExtensionsClient(cfg *rest.Config) (apiextensions.Interface, error) {
	return apiextensions.NewForConfig(cfg)
}
