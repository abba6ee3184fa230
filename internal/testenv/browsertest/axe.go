package browsertest

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/chromedp/chromedp"
)

// axeViolation is what Accessible reports of one of axe-core's violations.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	HelpURL string   `json:"helpUrl"`
	Targets []string `json:"targets"`
}

// axeRun runs axe-core over the whole document and keeps, of its violations, the serious and
// critical ones: moderate and minor findings are advice, not a failed page.
const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
	.filter(v => v.impact === "serious" || v.impact === "critical")
	.map(v => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
		targets: v.nodes.map(n => n.target.join(" "))})))`

// Accessible injects axe-core into the page as it stands (the view a person sees after step)
// and fails the test on any serious or critical violation, naming the rule, its help and the
// elements.
func (p *Page) Accessible(step string) {
	p.t.Helper()
	violations := p.axe()
	if len(violations) == 0 {
		return
	}
	var b strings.Builder
	for _, v := range violations {
		fmt.Fprintf(&b, "\n  %s (%s): %s <%s>", v.ID, v.Impact, v.Help, v.HelpURL)
		for _, target := range v.Targets {
			fmt.Fprintf(&b, "\n    %s", target)
		}
	}
	p.t.Errorf("%s: %s: %d serious or critical accessibility violations (axe-core), screenshot %s:%s",
		p.prefix, step, len(violations), p.Shot(step+"-axe"), b.String())
}

// axe answers the page's serious and critical violations.
func (p *Page) axe() []axeViolation {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	// injected through DevTools, so the page's CSP, which allows no foreign script, does
	// not stop it; a page loaded since has lost it, so it is injected at every check
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe !== "undefined"`))
	if err != nil {
		p.fail("look for axe-core", err)
	}
	if !loaded {
		src, err := os.ReadFile(p.b.axe)
		if err != nil {
			p.t.Fatalf("read axe-core: %v", err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
			p.fail("inject axe-core", err)
		}
	}
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("run axe-core", err)
	}
	return violations
}
