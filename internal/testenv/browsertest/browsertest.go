// Package browsertest drives Debian's headless Chromium for the dashboard's tests, through
// chromedp: a tab at a desktop or phone viewport, full-page screenshots kept as artifacts,
// axe-core's accessibility check, and a record of what the page did that it must not
// (uncaught exceptions, Content-Security-Policy refusals, requests to another origin).
//
// hack/browser-env.sh installs the browser and axe-core and exports EnvChromium and EnvAxe.
// Without them a test is skipped, or fails under EnvRequire.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const (
	// EnvChromium names the browser binary (Debian's /usr/bin/chromium); never a browser a
	// test tool downloaded.
	EnvChromium = "UPGRADESCOPE_CHROMIUM"
	// EnvAxe names axe-core's axe.min.js, as npm ci installed it from tools/axe.
	EnvAxe = "UPGRADESCOPE_AXE"
	// EnvRequire, set to 1 or true, turns a missing browser or axe-core from a skip into a
	// failure. .ci/run sets it.
	EnvRequire = "UPGRADESCOPE_REQUIRE_BROWSER"
)

// timeout bounds one step (a navigation, a click and the view it brings, a screenshot): a
// page that never settles fails the test instead of hanging it.
const timeout = 30 * time.Second

// Viewport is the size a page is laid out at.
type Viewport struct {
	Name          string // in artifact names: desktop, phone
	Width, Height int64
	Mobile        bool    // a touch screen and the mobile meta viewport
	Scale         float64 // device pixels per CSS pixel, for a mobile viewport
}

var (
	// Desktop is a laptop's browser window.
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 800}
	// Phone is a current phone held upright, at twice the pixels of its layout: as crisp as
	// a phone's screen in a picture, at less than half the bytes of its true 3x.
	Phone = Viewport{Name: "phone", Width: 390, Height: 844, Mobile: true, Scale: 2}
)

// Paths answers the browser and axe-core the environment names, skipping the test (or
// failing it under EnvRequire) when either is missing.
func Paths(t testing.TB) (chromium, axe string) {
	t.Helper()
	chromium, axe = os.Getenv(EnvChromium), os.Getenv(EnvAxe)
	var missing []string
	if chromium == "" {
		if p, err := exec.LookPath("chromium"); err == nil {
			chromium = p
		} else {
			missing = append(missing, EnvChromium+" is not set and no chromium is on PATH")
		}
	}
	if axe == "" {
		missing = append(missing, EnvAxe+" is not set")
	} else if _, err := os.Stat(axe); err != nil {
		missing = append(missing, fmt.Sprintf("%s: %v", EnvAxe, err))
	}
	if len(missing) == 0 {
		return chromium, axe
	}
	msg := strings.Join(missing, "; ") + ": run the tests under hack/browser-env.sh (it installs Debian's chromium and the pinned axe-core)"
	if required, _ := strconv.ParseBool(os.Getenv(EnvRequire)); required {
		t.Fatalf("%s, and %s is set", msg, EnvRequire)
	}
	t.Skip(msg)
	return "", ""
}

// Browser is one headless Chromium with a fresh profile; its tabs share localStorage, as
// tabs of one person's browser do, and each has its own sessionStorage.
type Browser struct {
	t      testing.TB
	ctx    context.Context // the browser's: each tab is a new chromedp context under it
	axe    string
	origin string
	shots  *artifacts
	tabs   int
}

// Start launches the browser for a test against origin (scheme://host:port; the page must
// load nothing from anywhere else). It is stopped when the test ends.
func Start(t testing.TB, origin string) *Browser {
	t.Helper()
	chromium, axe := Paths(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // the tests run as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
		// nothing on this machine may be reached but loopback: without these Chromium
		// keeps trying Google's hosts
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	// a context made from the allocator starts a browser of its own; tabs made from this
	// one open in it, sharing its profile
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// started here with a context that has no deadline: a deadline there would end the
	// browser with it
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return &Browser{t: t, ctx: ctx, axe: axe, origin: strings.TrimSuffix(origin, "/"), shots: newArtifacts(t)}
}

// Page is one tab at one viewport.
type Page struct {
	t      testing.TB
	b      *Browser
	ctx    context.Context
	vp     Viewport
	prefix string // of artifact names: the tab's number and viewport

	mu       sync.Mutex
	problems []string
	requests []string // every URL the tab asked for, in order
}

// Open opens a new tab of b laid out at vp. When the test ends, anything the page did that
// it must not fails the test.
func (b *Browser) Open(vp Viewport) *Page {
	b.t.Helper()
	b.tabs++
	p := &Page{t: b.t, b: b, vp: vp, prefix: fmt.Sprintf("tab%d-%s", b.tabs, vp.Name)}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(p.watch))
	p.ctx = ctx
	b.t.Cleanup(func() {
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, problem := range p.problems {
			b.t.Errorf("%s: %s", p.prefix, problem)
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open a tab: %v", err)
	}
	opts := []chromedp.EmulateViewportOption{}
	if vp.Mobile {
		opts = append(opts, chromedp.EmulateScale(vp.Scale), chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	p.Do("set the viewport", chromedp.EmulateViewport(vp.Width, vp.Height, opts...))
	return p
}

// watch records, from the tab's event loop, what the dashboard must never do. It must return
// fast and send no command.
func (p *Page) watch(ev any) {
	var problem string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		problem = "uncaught exception: " + exceptionText(ev.ExceptionDetails)
	case *log.EventEntryAdded:
		// a refused inline script or style, or a request the CSP blocked, is logged here
		if ev.Entry != nil && strings.Contains(ev.Entry.Text, "Content Security Policy") {
			problem = "CSP refusal: " + ev.Entry.Text
		}
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		if !p.sameOrigin(u) {
			problem = "request to another origin: " + u
		}
		p.mu.Lock()
		p.requests = append(p.requests, u)
		p.mu.Unlock()
	}
	if problem == "" {
		return
	}
	p.mu.Lock()
	p.problems = append(p.problems, problem)
	p.mu.Unlock()
}

// Requests answers every URL the tab has asked for, in order (the page, its assets, the
// fragments app.js fetched).
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// sameOrigin allows the server's origin and the URLs a browser makes up itself.
func (p *Page) sameOrigin(u string) bool {
	return u == p.b.origin || strings.HasPrefix(u, p.b.origin+"/") || strings.HasPrefix(u, "data:") ||
		strings.HasPrefix(u, "blob:") || u == "about:blank"
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s at %s:%d:%d", text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
}

// Do runs actions as one step named what, bounded by the step timeout; a failure fails the
// test with a screenshot of where the page stood.
func (p *Page) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.fail(what, err)
	}
}

// Eval evaluates a JavaScript expression in the page (through DevTools, so the page's CSP
// does not apply to it) and decodes its value into T.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.fail("evaluate "+abbreviate(expr, 120), err)
	}
	return v
}

// fail ends the test naming the step, the page's URL and the start of what it shows, with
// a screenshot saved.
func (p *Page) fail(what string, err error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText : "")`))
	if shot, serr := chromedp.Run(ctx, chromedp.FullScreenshot(100)); serr == nil {
		p.b.shots.save(p.t, p.prefix, "failed", shot)
	}
	p.t.Fatalf("%s: %s: %v\npage: %s", p.prefix, what, err, abbreviate(where, 1500))
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
