package web

import (
	"net/url"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/kb"
)

// Knowledge is the knowledge page's data: KB, the active bundle set's knowledge base (its
// meta, add-on registry and API lifecycle table), and Q, the search (a substring of an add-on's id, name or
// recommendation, or of an API's group/version/Kind or replacement).
type Knowledge struct {
	Frame
	Q       string
	KB      *kb.KB
	Bundles []Bundle
	// Now is the server's clock: support is judged on its UTC day, as the rules judge it.
	Now time.Time
}

// ParseKnowledgeQuery reads ?q=.
func ParseKnowledgeQuery(v url.Values) string { return strings.TrimSpace(v.Get("q")) }

// RenderKnowledge writes the knowledge fragment.
func RenderKnowledge(k *Knowledge) []byte {
	var d doc
	d.Grow(64 << 10)
	d.banner(k.Frame)
	d.w("<h1>Knowledge</h1>\n")
	d.w(`<p class="meta">What the server judges with: knowledge base horizon Kubernetes %s, generated from %s; bundles `,
		esc(k.KB.Meta().Horizon), esc(k.KB.Meta().GeneratedFrom))
	for i, b := range k.Bundles {
		if i > 0 {
			d.w(", ")
		}
		d.w("%s %s", esc(b.Name), esc(b.Revision))
	}
	d.w(".</p>\n")
	d.w(`<form id="knowledge-search" class="controls" method="get" action="%s/knowledge" role="search" aria-label="Search the knowledge base">`, esc(k.Prefix))
	d.w(`<label for="k-q">Search add-ons and APIs<input id="k-q" name="q" type="search" value="%s" autocomplete="off"></label><button type="submit">Search</button></form>`+"\n", esc(k.Q))
	k.addons(&d)
	k.apis(&d)
	return []byte(d.String())
}

func contains(needle string, hay ...string) bool {
	if needle == "" {
		return true
	}
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), needle) {
			return true
		}
	}
	return false
}

func (k *Knowledge) addons(d *doc) {
	needle := strings.ToLower(k.Q)
	d.w(`<section aria-labelledby="addons-h"><h2 id="addons-h">Add-on registry</h2><div class="table-wrap" tabindex="0"><table id="addons"><thead><tr>` +
		`<th scope="col">Add-on</th><th scope="col">Support</th><th scope="col">Release lines and Kubernetes ranges</th><th scope="col">Recommendation</th><th scope="col">Sources</th></tr></thead><tbody>` + "\n")
	n := 0
	addons := k.KB.Addons()
	for i := range addons {
		a := &addons[i]
		if !contains(needle, a.ID, a.Name, a.Recommendation) {
			continue
		}
		n++
		sup := k.KB.AddonSupport(a, k.Now)
		d.w(`<tr data-addon="%s" data-support="%s"><th scope="row">%s<br><span class="key">%s</span></th><td data-label="Support">%s`,
			esc(a.ID), sup.State, esc(a.Name), esc(a.ID), supportText(a.Support.Status, a.Support.EOL, sup))
		if a.Support.ExtendedEOL != "" {
			extended := "ended"
			if k.KB.ExtendedActive(a, k.Now) {
				extended = "until"
			}
			d.w(`<br>extended support %s %s`, extended, esc(a.Support.ExtendedEOL))
			if a.Support.ExtendedCondition != "" {
				d.w(` if %s`, esc(a.Support.ExtendedCondition))
			}
		}
		d.w(`</td><td data-label="Release lines">`)
		k.writeLines(d, a)
		d.w(`</td><td data-label="Recommendation">%s</td><td data-label="Sources">`, esc(a.Recommendation))
		d.citations(a.Support.Citations)
		d.w("</td></tr>\n")
	}
	d.w("</tbody></table></div>\n")
	if n == 0 {
		d.w(`<p class="muted">No add-on matches.</p>`)
	}
	d.w("</section>\n")
}

// writeLines lists an add-on's release lines (with end of life and Kubernetes range) and
// its version intervals' Kubernetes ranges.
func (k *Knowledge) writeLines(d *doc, a *kb.Addon) {
	if len(a.Lines) == 0 && len(a.Compat) == 0 {
		d.w("–")
		return
	}
	d.w("<ul>")
	for _, l := range a.Lines {
		sup := k.KB.LineSupport(&l, k.Now)
		d.w(`<li data-line="%s" data-support="%s">%s: %s%s`, esc(l.Line), sup.State, esc(l.Line), lineText(l.EOL, sup), kubeRange(l.Kubernetes))
		if len(l.Citations) > 0 {
			d.w(` (`)
			d.citations(l.Citations)
			d.w(`)`)
		}
		d.w(`</li>`)
	}
	for _, c := range a.Compat {
		d.w(`<li data-compat="">%s%s`, versionRange(c.Versions), kubeRange(c.Kubernetes))
		if len(c.Citations) > 0 {
			d.w(` (`)
			d.citations(c.Citations)
			d.w(`)`)
		}
		d.w(`</li>`)
	}
	d.w("</ul>")
}

// supportText is an add-on's support as the rules judge it today: the registry's word
// ("supported") holds only until its end of life, which the addons rule reports from that
// very day (kb.AddonSupport).
func supportText(status, eol string, s kb.Support) string {
	switch {
	case s.State == kb.SupportEnded && s.Date != "":
		return `<span class="v v-blocked">end of life</span> since ` + esc(s.Date)
	case s.State == kb.SupportEnded:
		return `<span class="v v-blocked">retired</span>`
	case s.State == kb.SupportEnding:
		return `<span class="v v-unknown">ending</span> end of life on ` + esc(s.Date)
	case s.Date != "":
		return esc(status) + `<br>end of life ` + esc(s.Date)
	case eol != "":
		return esc(status) + `<br>end of life ` + esc(eol)
	}
	return esc(status)
}

// lineText is a release line's end of life as the rules judge it today (kb.LineSupport).
func lineText(eol string, s kb.Support) string {
	switch {
	case s.State == kb.SupportEnded && s.Date != "":
		return "ended on " + esc(s.Date)
	case s.State == kb.SupportEnded:
		return "ended"
	case s.State == kb.SupportEnding:
		return "ends on " + esc(s.Date)
	}
	return "end of life " + esc(orDash(eol))
}

// versionRange is a compat interval's add-on versions, from (inclusive) before (exclusive),
// either end open: the registry writes an interval open below as from "0.0.0" or without
// from, one open above without before.
func versionRange(v map[string]string) string {
	from, before := v["from"], v["before"]
	if from == "0.0.0" {
		from = ""
	}
	switch {
	case from == "" && before == "":
		return "any version"
	case before == "":
		return "versions " + esc(from) + " and later"
	case from == "":
		return "versions before " + esc(before)
	}
	return "versions " + esc(from) + " to before " + esc(before)
}

// kubeRange is the Kubernetes minors of a line or interval, both ends inclusive, either
// open.
func kubeRange(r *kb.KubeRange) string {
	switch {
	case r == nil || r.Min == "" && r.Max == "":
		return ""
	case r.Min == "":
		return "; Kubernetes up to " + esc(r.Max)
	case r.Max == "":
		return "; Kubernetes " + esc(r.Min) + " and later"
	}
	return "; Kubernetes " + esc(r.Min) + "–" + esc(r.Max)
}

func (k *Knowledge) apis(d *doc) {
	needle := strings.ToLower(k.Q)
	d.w(`<section aria-labelledby="apis-h"><h2 id="apis-h">API lifecycle</h2><div class="table-wrap" tabindex="0"><table id="apis"><thead><tr>` +
		`<th scope="col">Group/version/Kind</th><th scope="col">Introduced</th><th scope="col">Deprecated</th><th scope="col">Removed</th><th scope="col">Replacement</th><th scope="col">Sources</th></tr></thead><tbody>` + "\n")
	n := 0
	apis := k.KB.APIs()
	for i := range apis {
		a := &apis[i]
		key := a.Key()
		if !contains(needle, key, a.Replacement) {
			continue
		}
		n++
		d.w(`<tr data-api="%s"><th scope="row">%s</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>`, esc(key), esc(key),
			esc(orDash(a.Introduced)), esc(orDash(a.Deprecated)), esc(orDash(a.Removed)), esc(orDash(a.Replacement)))
		d.citations(a.Citations)
		d.w("</td></tr>\n")
	}
	d.w("</tbody></table></div>\n")
	if n == 0 {
		d.w(`<p class="muted">No API matches.</p>`)
	}
	d.w("</section>\n")
}
