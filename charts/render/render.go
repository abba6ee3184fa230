// Package render renders one chart version as `helm upgrade` would on a target Kubernetes
// minor, with the Helm SDK and no cluster, and lists the APIs its manifests use.
package render

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
)

// MaxManifestBytes bounds what one rendering may produce: a chart rendering more is refused.
const MaxManifestBytes = 16 << 20

// Release is the release a chart is rendered for, as its templates read .Release.
type Release struct {
	Name, Namespace string
}

// APIs renders ch at values (the release's user-supplied values; the chart's defaults are
// merged under them) for rel on target ("1.36"), and returns the distinct "apiVersion Kind"
// its manifests and hooks use ("networking.k8s.io/v1beta1 Ingress", "v1 ConfigMap"), sorted.
// CRDs under crds/ are not templates and are not listed.
//
// The templates see .Capabilities.KubeVersion as the target's .0 patch and
// .Capabilities.APIVersions as Helm's default set with what served refuses left out (see
// Capabilities), so a chart that picks an apiVersion by either renders as it would there.
// Rendering reads no cluster and no network: lookup returns nothing, DNS is off, and the
// values schema is not validated (Helm's validator fetches remote $refs). ch is not
// modified. An error names the chart and version and carries Helm's message with what values
// may have put in it left out (see withhold).
func APIs(ctx context.Context, ch *chartv2.Chart, values map[string]any, rel Release, target string, served Served) ([]string, error) {
	name := ch.Name() + " " + ch.Metadata.Version
	caps, err := Capabilities(target, served)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", name, err)
	}
	rendered, err := renderFiles(ctx, cloneChart(ch), copyMap(values), rel, caps)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", name, withhold(err))
	}
	manifest, err := join(rendered)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", name, err)
	}
	usage, warnings := files.ManifestAPIs(name, manifest)
	for _, w := range warnings {
		if w.Partial {
			return nil, fmt.Errorf("render chart %s: a rendered document cannot be read: %s", name, w.Message)
		}
	}
	return inventory.APINames(usage), nil
}

// renderFiles renders the templates of ch, which it changes (dependencies a condition
// disables are dropped, as Helm does), the way action.Upgrade prepares them.
func renderFiles(ctx context.Context, ch *chartv2.Chart, values map[string]any, rel Release, caps *common.Capabilities) (map[string]string, error) {
	if values == nil {
		values = map[string]any{}
	}
	if err := chartutil.ProcessDependencies(ch, values); err != nil {
		return nil, fmt.Errorf("process dependencies: %w", err)
	}
	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 2, IsUpgrade: true}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, values, opts, caps, true)
	if err != nil {
		return nil, fmt.Errorf("merge values: %w", err)
	}
	var b budget
	e := engine.Engine{CustomTemplateFuncs: b.funcs()}
	files, err := within(ctx, renderTime, func() (map[string]string, error) { return e.RenderWithContext(ctx, ch, top) })
	if err != nil {
		b.abandoned.Store(true) // a rendering still running stops at its next function call
	}
	return files, err
}

// join concatenates the rendered files, NOTES.txt left out, in name order as one YAML
// stream, refusing more than MaxManifestBytes.
func join(rendered map[string]string) ([]byte, error) {
	names := make([]string, 0, len(rendered))
	size := 0
	for name, text := range rendered {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		names = append(names, name)
		size += len(text) + len("---\n\n")
	}
	if size > MaxManifestBytes {
		return nil, fmt.Errorf("rendered manifests larger than %d MiB", MaxManifestBytes>>20)
	}
	sort.Strings(names)
	var b strings.Builder
	b.Grow(size)
	for _, name := range names {
		b.WriteString("---\n")
		b.WriteString(rendered[name])
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}
