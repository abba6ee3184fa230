package web

import (
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// AuditPanel is what the API server's audit webhook backend told the server about the
// cluster: the aggregated section, and how many batches built it and when.
type AuditPanel struct {
	Batches               int64
	FirstBatch, LastBatch time.Time
	// Section is nil when the reader may not see it (Withheld).
	Section *inventory.AuditCalls
	// Withheld: the callers are the whole cluster's (people, every team's service
	// accounts), which a team-scoped reader is not shown.
	Withheld bool
	// Unreadable: the stored section could not be read (the cluster is judged without it).
	Unreadable bool
}

// auditTopCallers is how many callers the panel lists, busiest first; the findings name
// the callers of each API.
const auditTopCallers = 25

// audit is the panel of the cluster's callers of deprecated APIs, as the webhook batches
// counted them (live: the stored findings count them as of their evaluation).
func (c *Cluster) audit(d *doc) {
	p := c.Audit
	if p == nil {
		return
	}
	d.w(`<section id="audit-callers" aria-labelledby="audit-h"><h2 id="audit-h">Callers of deprecated APIs (audit webhook)</h2>`)
	last := p.LastBatch.UTC()
	d.w(`<p class="meta" id="audit-meta">Source: the API server's audit webhook · %s`, batches(p.Batches))
	if s := p.Section; s != nil {
		d.w(` · %s received`, plural(int(s.Events), "event"))
	}
	d.w(` · last batch <time datetime="%s">%s</time></p>`, last.Format(time.RFC3339), last.Format("2006-01-02 15:04:05 MST"))
	if p.Withheld {
		d.w(`<p class="muted" id="audit-withheld">The callers are the whole cluster's (people and every team's service accounts): a fleet-wide read token shows them.</p></section>` + "\n")
		return
	}
	s := p.Section
	if p.Unreadable {
		d.w(`<p class="muted" id="audit-unreadable">The stored audit section could not be read: the cluster is judged without it until its next batch.</p>`)
	}
	if s == nil {
		d.w("</section>\n")
		return
	}
	if s.Malformed > 0 {
		d.w(`<p class="muted" id="audit-malformed">%s that were not audit events were skipped.</p>`, plural(int(s.Malformed), "item"))
	}
	if len(s.Callers) == 0 {
		if len(s.Omitted) == 0 && s.OmittedAPIs == 0 {
			d.w(`<p class="muted" id="audit-none">No call to a deprecated API in %s.</p></section>`+"\n", plural(int(s.Requests), "request"))
			return
		}
		// Every call was counted per API only (past the section's bounds): say so, never "none".
		c.auditOmitted(d, s)
		d.w("</section>\n")
		return
	}
	d.w(`<div class="table-wrap" tabindex="0"><table id="audit-table"><caption class="muted">The busiest callers first, counted since the first batch</caption><thead><tr>` +
		`<th scope="col">User agent</th><th scope="col">Service account or user</th><th scope="col">API</th><th scope="col">Verb</th>` +
		`<th scope="col">Calls</th><th scope="col">Last seen</th><th scope="col">Removed in</th></tr></thead><tbody>`)
	for _, cl := range s.Callers[:min(len(s.Callers), auditTopCallers)] {
		who := cl.User
		if cl.ServiceAccount != "" {
			who = cl.ServiceAccount
		}
		seen, _ := time.Parse(inventory.AuditTime, cl.LastSeen)
		d.w(`<tr data-user-agent="%s" data-count="%d"><th scope="row">%s</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td><time datetime="%s">%s</time></td><td>%s</td></tr>`,
			esc(cl.UserAgent), cl.Count, esc(orDash(cl.UserAgent)), esc(orDash(who)), esc(apiText(cl)), esc(cl.Verb), thousands(int(cl.Count)),
			esc(cl.LastSeen), seen.Format("2006-01-02 15:04 MST"), esc(orDash(cl.RemovedRelease)))
	}
	d.w("</tbody></table></div>")
	c.auditOmitted(d, s)
	d.w("</section>\n")
}

// auditOmitted says what the table leaves out: callers past it, and those the section
// counts only per API.
func (c *Cluster) auditOmitted(d *doc, s *inventory.AuditCalls) {
	more := len(s.Callers) - auditTopCallers
	var calls, callers int64
	for _, o := range s.Omitted {
		calls, callers = calls+o.Calls, callers+o.Callers
	}
	calls += s.OmittedAPIs
	if more <= 0 && calls == 0 {
		return
	}
	d.w(`<p class="muted" id="audit-more">`)
	if more > 0 {
		d.w(`and %s more %s not listed here`, thousands(more), pick(more == 1, "caller", "callers"))
	}
	if calls > 0 {
		if more > 0 {
			d.w("; ")
		}
		d.w(`%s of %s counted per API only (past the section's bounds)`, plural(int(calls), "call"), plural(int(callers), "other caller"))
	}
	d.w("</p>")
}

// apiText is group/version resource[/subresource], "v1 pods" for the core group.
func apiText(cl inventory.AuditCaller) string {
	gv := cl.Version
	if cl.Group != "" {
		gv = cl.Group + "/" + cl.Version
	}
	out := gv + " " + cl.Resource
	if cl.Subresource != "" {
		out += "/" + cl.Subresource
	}
	return out
}

// batches is "1 batch", "12 batches".
func batches(n int64) string {
	if n == 1 {
		return "1 batch"
	}
	return thousands(int(n)) + " batches"
}
