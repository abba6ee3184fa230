package web

import (
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// gaps writes the report's gaps grouped by cause. When the verdict is unknown they are its
// cause and come first, above the findings (cause true); otherwise they follow them.
func (c *Cluster) gaps(d *doc, cause bool) {
	title := "Not assessed"
	if cause {
		title = "Why the verdict is unknown"
	}
	d.w(`<section id="gaps" aria-labelledby="gaps-h"><h2 id="gaps-h">%s</h2>`, title)
	if c.Result == nil || len(c.Result.NotAssessed) == 0 {
		d.w(`<p class="muted">Every capability was assessed.</p></section>` + "\n")
		return
	}
	groups := report.GroupGaps(c.Result.NotAssessed)
	if cause {
		required, causes := 0, 0
		for _, g := range groups {
			if g.Required {
				required += len(g.Capabilities)
				causes++
			}
		}
		verb := "were"
		if required == 1 {
			verb = "was"
		}
		d.w(`<p id="unknown-cause">%s %s not assessed, from %s. The score and the findings cover only what was assessed: they do not mean ready.</p>`,
			plural(required, "required input"), verb, plural(causes, "cause"))
	}
	d.w(`<ul class="gaps">`)
	for _, g := range groups {
		c.gapGroup(d, g)
	}
	d.w("</ul></section>\n")
}

func (c *Cluster) gapGroup(d *doc, g report.GapGroup) {
	kind := "optional: the verdict stands"
	if g.Required {
		kind = "required: the verdict is unknown without it"
	}
	partial := ""
	if g.Partial {
		partial = " (partial)"
	}
	bundle, probes := g.Probes()
	if !probes || len(g.Capabilities) == 1 {
		d.w(`<li data-capability="%s"><strong>%s</strong>%s, %s. Hides %s. <span class="muted">Why: %s</span>`,
			esc(g.Capabilities[0]), esc(g.Capabilities[0]), partial, kind, esc(hides(g.Capabilities[0])), esc(g.Reason))
	} else {
		if g.Required {
			kind = "required: the verdict is unknown without them"
		}
		d.w(`<li data-capability="%s" data-gaps="%d"><strong>%s probes of %s</strong>%s, %s. <span class="muted">Why: %s</span>`,
			esc(g.Family), len(g.Capabilities), thousands(len(g.Capabilities)), esc(bundle), partial, kind, esc(g.Reason))
	}
	if fix := report.ProbeFix(g, c.ReportBundles, c.Collector); fix != "" {
		d.w(` <span class="fix">%s</span>`, esc(fix))
	}
	if len(g.Skipped) > 0 {
		d.w(` <span class="muted">Skipped: %s</span>`, esc(strings.Join(g.Skipped[:min(len(g.Skipped), 20)], ", ")))
	}
	if probes && len(g.Capabilities) > 1 {
		d.w(`<details><summary>The %s probes</summary><p class="key">%s</p></details>`, thousands(len(g.Capabilities)),
			esc(strings.Join(g.Capabilities, ", ")))
	}
	d.w(`</li>`)
}
