// Package web renders the fleet server's dashboard: an HTML shell per page, the HTML
// fragments app.js puts in it, and the embedded, fingerprinted assets. It renders what the
// server's read side hands it (views of stored evaluations and the active knowledge base)
// and decides nothing about readiness.
//
// Every value is written through html.EscapeString, not html/template: linking html/template
// (through text/template's reflection) keeps every exported method of every type in the
// binary, 31 MB and 15 MiB of each scan's peak memory (cmd/upgradescope/deps_test.go).
package web

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// CSP allows this origin only and no inline script or style: fragments carry no script
// and no style attribute, the shell loads app.js and app.css from P/assets.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// SecurityHeaders sets the headers every dashboard answer carries: shell, fragment, asset
// and error alike.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// Frame is what every fragment needs besides its data: the path prefix links start with
// and, for a team-scoped credential, its teams (nil for the whole fleet).
type Frame struct {
	Prefix string
	Teams  []string
}

// esc escapes text for an element or a quoted attribute.
func esc(s string) string { return html.EscapeString(s) }

// doc is a fragment being written.
type doc struct{ strings.Builder }

// w writes format with args; every string arg must already be escaped (esc) or be markup
// this package built.
func (d *doc) w(format string, args ...any) { fmt.Fprintf(&d.Builder, format, args...) }

// banner opens a fragment rendered for a team-scoped credential.
func (d *doc) banner(f Frame) {
	if f.Teams == nil {
		return
	}
	names := make([]string, len(f.Teams))
	for i, t := range f.Teams {
		names[i] = "<strong>" + esc(t) + "</strong>"
	}
	d.w(`<div id="team-banner" class="banner" role="status">A team-scoped token: you see the clusters and findings of %s only.</div>`+"\n",
		strings.Join(names, ", "))
}

// href is prefix+path with query (empty values left out), escaped for an attribute.
func href(prefix, path string, q url.Values) string {
	clean := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if v != "" {
				clean.Add(k, v)
			}
		}
	}
	u := prefix + path
	if enc := clean.Encode(); enc != "" {
		u += "?" + enc
	}
	return esc(u)
}

// verdict is a verdict as a word in its colour ("none": no stored evaluation, "n/a": the
// cluster already runs the target).
func verdict(v string) string {
	switch v {
	case "ready", "blocked", "unknown":
		return `<span class="v v-` + v + `">` + v + `</span>`
	case "", "none":
		return `<span class="v v-none">no evaluation</span>`
	case "n/a":
		return `<span class="v v-na">n/a</span>`
	}
	return `<span class="v v-unknown">` + esc(v) + `</span>`
}

// thousands writes n with comma separators: 1,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// safeURL answers whether a citation may be a link: http and https only, so a bundle's
// text can never become a javascript: URL.
func safeURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// linkText is a citation's host and path, shortened: whole URLs make tables too wide to
// read on a phone, and the link itself keeps the whole address.
func linkText(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	text := strings.TrimPrefix(u.Host, "www.") + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.Fragment != "" {
		text += "#" + u.Fragment
	}
	if r := []rune(text); len(r) > 48 {
		text = string(r[:47]) + "…"
	}
	return text
}

// citations writes links for http(s) citations and text for anything else.
func (d *doc) citations(cs []string) {
	for i, c := range cs {
		if i > 0 {
			d.WriteString(", ")
		}
		if safeURL(c) {
			d.w(`<a href="%s" rel="noreferrer noopener">%s</a>`, esc(c), esc(linkText(c)))
		} else {
			d.WriteString(esc(c))
		}
	}
}
