package render

import (
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// cloneChart copies what rendering changes: Helm's dependency processing rewrites a chart's
// metadata, dependencies and values in place, and the chart a repository reader hands out
// may be rendered again, at other values or another target. Templates and files are shared:
// nothing writes them.
func cloneChart(ch *chartv2.Chart) *chartv2.Chart {
	c := *ch
	if ch.Metadata != nil {
		md := *ch.Metadata
		md.Dependencies = make([]*chartv2.Dependency, len(ch.Metadata.Dependencies))
		for i, d := range ch.Metadata.Dependencies {
			if d != nil {
				dep := *d
				dep.Tags = append([]string(nil), d.Tags...)
				dep.ImportValues = append([]any(nil), d.ImportValues...)
				md.Dependencies[i] = &dep
			}
		}
		if ch.Metadata.Dependencies == nil {
			md.Dependencies = nil
		}
		c.Metadata = &md
	}
	c.Values = copyMap(ch.Values)
	deps := make([]*chartv2.Chart, 0, len(ch.Dependencies()))
	for _, d := range ch.Dependencies() {
		deps = append(deps, cloneChart(d))
	}
	c.SetDependencies(deps...)
	return &c
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return copyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
