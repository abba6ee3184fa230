package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard's shell fills main#view with a fragment it fetches; a test waits for the
// fragment it expects, never for a fixed time. Each step that brings a view saves a
// full-page screenshot named after it.

// pollEvery is how often a wait looks at the page. chromedp's own Poll builds its predicate
// with new Function, which the dashboard's CSP (no 'unsafe-eval') refuses in the page; a
// DevTools evaluation from here is not subject to it.
const pollEvery = 25 * time.Millisecond

// Goto loads path (on the browser's origin, query included) as a person typing the address,
// and waits until main#view holds an element matching ready.
func (p *Page) Goto(path, ready string) {
	p.t.Helper()
	p.Do("open "+path, chromedp.Navigate(p.b.origin+path))
	p.WaitFor("open "+path, ready)
	p.Shot("open " + path)
}

// Visit loads path without waiting for a view: for a page that is to ask for a token.
func (p *Page) Visit(path string) {
	p.t.Helper()
	p.Do("open "+path, chromedp.Navigate(p.b.origin+path))
}

// VisitHeaders loads path without waiting for a view and answers the document's response
// headers as the browser received them, names in lower case.
func (p *Page) VisitHeaders(path string) map[string]string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(p.b.origin+path))
	if err != nil {
		p.fail("open "+path, err)
	}
	headers := map[string]string{}
	for name, v := range resp.Headers {
		headers[strings.ToLower(name)] = fmt.Sprint(v)
	}
	return headers
}

// Reload reloads the page and waits for ready, as after pressing F5.
func (p *Page) Reload(ready string) {
	p.t.Helper()
	p.Do("reload", chromedp.Reload())
	p.WaitFor("reload", ready)
	p.Shot("reload")
}

// Follow runs act (a click, a form submit) and waits until the shell has replaced what
// main#view showed and the new view holds ready: an element matching ready alone could
// still be the old view's.
func (p *Page) Follow(what string, act chromedp.Action[chromedp.Void], ready string) {
	p.t.Helper()
	Eval[bool](p, `(() => { const v = document.querySelector("main#view"); window.__browsertestStale = v ? v.firstElementChild : null; return true })()`)
	p.Do(what, act)
	p.until(what, fmt.Sprintf(`(() => {
		const v = document.querySelector("main#view");
		return !!v && v.firstElementChild !== null && v.firstElementChild !== window.__browsertestStale && v.querySelector(%s) !== null;
	})()`, jsString(ready)), "a new view with "+ready)
	p.Shot(what)
}

// WaitFor waits until main#view holds an element matching sel.
func (p *Page) WaitFor(what, sel string) {
	p.t.Helper()
	p.until(what, fmt.Sprintf(`(() => { const v = document.querySelector("main#view"); return !!v && v.querySelector(%s) !== null })()`,
		jsString(sel)), sel+" in main#view")
}

// WaitPage waits until the document (shell included) holds an element matching sel.
func (p *Page) WaitPage(what, sel string) {
	p.t.Helper()
	p.until(what, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(sel)), sel)
}

// WaitVisible waits until an element matching sel is rendered and not hidden.
func (p *Page) WaitVisible(what, sel string) {
	p.t.Helper()
	p.until(what, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.checkVisibility() })()`,
		jsString(sel)), sel+" visible")
	p.Shot(what)
}

// Visible says whether an element matching sel is rendered and not hidden, now.
func (p *Page) Visible(sel string) bool {
	p.t.Helper()
	return Eval[bool](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.checkVisibility() })()`, jsString(sel)))
}

// WaitRequest waits until the tab has asked, after its first from requests, for a URL
// containing part: a step whose view does not change (a refused token) has at least been sent.
func (p *Page) WaitRequest(what string, from int, part string) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		reqs := p.Requests()
		for _, u := range reqs[min(from, len(reqs)):] {
			if strings.Contains(u, part) {
				return
			}
		}
		if time.Now().After(deadline) {
			p.fail(what, fmt.Errorf("no request for %s after %s", part, timeout))
		}
		time.Sleep(pollEvery)
	}
}

// WaitUntil waits until the JavaScript expression cond (describe says what it means) is true.
func (p *Page) WaitUntil(what, cond, describe string) {
	p.t.Helper()
	p.until(what, cond, describe)
}

// until polls the boolean expression cond until it is true or the step timeout passes.
func (p *Page) until(what, cond, describe string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		// a navigation in flight destroys the context an evaluation ran in: look again
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("not there")
			}
			p.fail(fmt.Sprintf("%s: wait for %s", what, describe), fmt.Errorf("%w after %s", err, timeout))
			return
		case <-time.After(pollEvery):
		}
	}
}

// Path answers the page's location as path?query (no origin, no fragment).
func (p *Page) Path() string {
	p.t.Helper()
	return Eval[string](p, `location.pathname + location.search`)
}

// Count answers how many elements match sel in the document.
func (p *Page) Count(sel string) int {
	p.t.Helper()
	return Eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
}

// Text answers the visible text of the first element matching sel, "" when there is none.
func (p *Page) Text(sel string) string {
	p.t.Helper()
	return Eval[string](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText : "" })()`, jsString(sel)))
}

// TextContent answers all the text of the first element matching sel, folded parts (a
// closed details) included; "" when there is none.
func (p *Page) TextContent(sel string) string {
	p.t.Helper()
	return Eval[string](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.textContent : "" })()`, jsString(sel)))
}

// Texts answers the visible text of every element matching sel, in document order.
func (p *Page) Texts(sel string) []string {
	p.t.Helper()
	return Eval[[]string](p, fmt.Sprintf(`Array.from(document.querySelectorAll(%s), e => e.innerText)`, jsString(sel)))
}

// Attrs answers attribute name of every element matching sel, in document order.
func (p *Page) Attrs(sel, name string) []string {
	p.t.Helper()
	return Eval[[]string](p, fmt.Sprintf(`Array.from(document.querySelectorAll(%s), e => e.getAttribute(%s) ?? "")`,
		jsString(sel), jsString(name)))
}

// InViewport says whether the first element matching sel is at least partly on screen.
func (p *Page) InViewport(sel string) bool {
	p.t.Helper()
	return Eval[bool](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false;
		const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight })()`, jsString(sel)))
}

// Overflow answers the elements wider than the viewport makes room for: on a phone a page
// must scroll down, not sideways (a wide table scrolls inside its own box).
func (p *Page) Overflow() []string {
	p.t.Helper()
	return Eval[[]string](p, `(() => {
		const w = document.documentElement.clientWidth, out = [];
		if (document.documentElement.scrollWidth <= w) return out;
		for (const e of document.querySelectorAll("body *")) {
			const r = e.getBoundingClientRect();
			if (r.right > w + 1 && getComputedStyle(e).position !== "fixed") {
				let inScroller = false;
				for (let a = e.parentElement; a; a = a.parentElement) {
					const o = getComputedStyle(a).overflowX;
					if (o === "auto" || o === "scroll" || o === "hidden") { inScroller = true; break; }
				}
				if (!inScroller) out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : ""));
			}
		}
		return out.slice(0, 10);
	})()`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SubmitWith sets the form field sel to value and submits its form, as choosing an option
// and pressing the form's button does.
func SubmitWith(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		e.value = %q;
		e.form.requestSubmit();
	})()`, sel, value))
}
