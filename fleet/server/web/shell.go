package web

import (
	"net/http"
)

// Pages of the dashboard, as nav names them.
var pages = []struct{ id, path, label string }{
	{"fleet", "/", "Fleet"},
	{"findings", "/findings", "Findings"},
	{"teams", "/teams", "Teams"},
	{"knowledge", "/knowledge", "Knowledge"},
}

// Shell is the page every dashboard URL answers without credentials: landmarks, nav,
// main#view, which app.js fills with the fragment of the same URL, and the token form
// (hidden until a fragment answers 401, when main is emptied; after main, so the first h1
// of the document is always the view's). It holds no data, so it is the same for every
// reader.
func Shell(prefix string) []byte {
	var d doc
	p := esc(prefix)
	d.w(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>upgradescope</title>
<link rel="stylesheet" href="%s/assets/%s">
<script src="%s/assets/%s" defer></script>
</head>
<body data-prefix="%s">
<a class="skip" href="#view">Skip to content</a>
<header class="top">
<a class="brand" href="%s/">upgradescope</a>
<nav aria-label="Dashboard">
<ul>
`, p, StyleName(), p, ScriptName(), p, p)
	for _, pg := range pages {
		d.w(`<li><a href="%s%s" data-page="%s">%s</a></li>`+"\n", p, pg.path, pg.id, pg.label)
	}
	d.w(`</ul>
</nav>
<div class="session"><button type="button" id="token-forget" hidden>Forget token</button></div>
</header>
<main id="view"><p class="muted">Loading…</p></main>
<section id="token-panel" aria-labelledby="token-heading" hidden>
<h1 id="token-heading">A read token is needed</h1>
<p id="token-reason" class="muted"></p>
<form id="token-form">
<label for="token-input">Read token</label>
<input id="token-input" name="token" type="password" autocomplete="off" spellcheck="false" required>
<label class="check" for="token-remember"><input id="token-remember" type="checkbox"> remember on this device</label>
<button id="token-submit" type="submit">Use token</button>
</form>
<p class="muted">The token stays in this tab (sessionStorage) unless you ask to remember it on this device (localStorage); it is sent only to this server, as a bearer.</p>
</section>
</body>
</html>
`)
	return []byte(d.String())
}

// WriteHTML answers a shell or fragment: HTML with the security headers and cache.
func WriteHTML(w http.ResponseWriter, cacheControl string, body []byte) {
	SecurityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", cacheControl)
	_, _ = w.Write(body)
}
