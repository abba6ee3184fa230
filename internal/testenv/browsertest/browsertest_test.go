package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A shell like the dashboard's: a strict CSP, main#view filled by a script from the same
// origin with the fragment for the address, links intercepted and pushed to history.
const (
	shell = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><script src="/app.js" defer></script></head>
<body><main id="view"></main></body></html>`
	app = `async function load() {
  const r = await fetch("/ui" + location.pathname + location.search);
  document.getElementById("view").innerHTML = await r.text();
}
document.addEventListener("click", e => {
  const a = e.target.closest("a"); if (!a) return;
  e.preventDefault(); history.pushState(null, "", a.href); load();
});
load();`
)

func fixture(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(app))
	})
	mux.HandleFunc("GET /ui/{page}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("page") {
		case "first":
			_, _ = w.Write([]byte(`<h1>First</h1><p><a id="go" href="/second?x=1">to the second page</a></p>`))
		case "second":
			_, _ = w.Write([]byte(`<h1>Second</h1><p id="x">` + r.URL.Query().Get("x") + `</p>`))
		case "unlabelled":
			// an input without a label and an image without alt: serious/critical for axe
			_, _ = w.Write([]byte(`<h1>Bad</h1><input id="nolabel" type="text"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">`))
		case "inline":
			_, _ = w.Write([]byte(`<h1>Inline</h1><img src="x" onerror="document.title='ran'" alt="x">`))
		}
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; img-src 'self' data:")
		_, _ = w.Write([]byte(shell))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func TestAFollowedLinkWaitsForTheNewViewAndTheAddressKeepsItsQuery(t *testing.T) {
	t.Setenv(EnvArtifacts, t.TempDir())
	ts := fixture(t)
	for _, vp := range []Viewport{Desktop, Phone} {
		t.Run(vp.Name, func(t *testing.T) {
			p := Start(t, ts.URL).Open(vp)
			p.Goto("/first", "a#go")
			p.Follow("click the link", chromedp.Click(chromedp.CSS("a#go")), "p#x")
			if got := p.Path(); got != "/second?x=1" {
				t.Errorf("address after the click: %q", got)
			}
			if got := p.Text("p#x"); got != "1" {
				t.Errorf("the second view shows %q", got)
			}
			if w := Eval[int](p, `window.innerWidth`); int64(w) != vp.Width {
				t.Errorf("viewport width %d, want %d", w, vp.Width)
			}
			shot := p.Shot("second")
			if info, err := os.Stat(shot); err != nil || info.Size() == 0 || !strings.HasSuffix(shot, "-second.png") {
				t.Errorf("screenshot %s: %v", shot, err)
			}
			p.Accessible("second")
		})
	}
}

func TestAxeReportsAnUnlabelledInputAndAnImageWithoutAlternativeText(t *testing.T) {
	t.Setenv(EnvArtifacts, t.TempDir())
	ts := fixture(t)
	p := Start(t, ts.URL).Open(Desktop)
	p.Goto("/unlabelled", "#nolabel")
	var ids []string
	for _, v := range p.axe() {
		ids = append(ids, v.ID)
		if len(v.Targets) == 0 || v.Help == "" {
			t.Errorf("violation %s names no element or help: %+v", v.ID, v)
		}
	}
	if got := strings.Join(ids, ","); !strings.Contains(got, "label") || !strings.Contains(got, "image-alt") {
		t.Errorf("serious or critical violations: %s, want label and image-alt", got)
	}
}

func TestAnInlineHandlerTheCSPRefusesIsRecordedAsAProblem(t *testing.T) {
	t.Setenv(EnvArtifacts, t.TempDir())
	ts := fixture(t)
	p := Start(t, ts.URL).Open(Desktop)
	p.Goto("/inline", "h1")
	refused := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, problem := range p.problems {
			if strings.Contains(problem, "CSP refusal") {
				return true
			}
		}
		return false
	}
	// the refusal comes as an event of its own: wait for it, within a step's timeout
	for deadline := time.Now().Add(timeout); !refused(); time.Sleep(pollEvery) {
		if time.Now().After(deadline) {
			t.Fatalf("no CSP refusal recorded; problems: %v", p.problems)
		}
	}
	// the refusal is what this test wants: do not fail it at cleanup
	p.mu.Lock()
	p.problems = nil
	p.mu.Unlock()
}

func TestPublishWritesTheScreenshotUnderAStableNameWhenAskedTo(t *testing.T) {
	t.Setenv(EnvArtifacts, t.TempDir())
	docs := t.TempDir()
	t.Setenv(EnvScreenshots, docs)
	ts := fixture(t)
	p := Start(t, ts.URL).Open(Phone)
	p.Goto("/first", "a#go")
	p.Publish("first")
	if info, err := os.Stat(filepath.Join(docs, "first-phone.png")); err != nil || info.Size() == 0 {
		t.Errorf("published screenshot: %v", err)
	}
}
