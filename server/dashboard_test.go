package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/report"
	"github.com/upgradescope/upgradescope/server"
	"github.com/upgradescope/upgradescope/server/store"
	"github.com/upgradescope/upgradescope/server/web"
)

// securityHeaders are the headers every dashboard answer carries.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"X-Frame-Options":         "DENY",
}

func checkSecurityHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	for k, want := range securityHeaders {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s is %q, want %q", path, k, got, want)
		}
	}
}

var assetRef = regexp.MustCompile(`(?:src|href)="([^"]*/assets/app\.[0-9a-f]{12}\.(?:js|css))"`)

func TestDashboardPagesAnswerTheShellWithoutCredentials(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.ReadToken = "reader" })
	for _, path := range []string{"/", "/clusters/7", "/teams", "/knowledge"} {
		r := ts.get(path, "")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", path, r.status, r.header.Get("Content-Type"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache", path, cc)
		}
		checkSecurityHeaders(t, path, r.header)
		body := string(r.body)
		for _, want := range []string{`<main id="view">`, `<nav`, `id="token-form"`, `id="token-input" name="token" type="password"`,
			`id="token-remember"`, `id="token-submit"`, `id="token-forget"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the shell lacks %s", path, want)
			}
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
			t.Errorf("%s: the shell has an inline script or style, which the CSP forbids", path)
		}
		if refs := assetRef.FindAllStringSubmatch(body, -1); len(refs) != 2 {
			t.Errorf("%s: the shell links %d fingerprinted assets, want app.js and app.css", path, len(refs))
		}
	}
}

func TestDashboardAssetsAreFingerprintedAndCachedImmutably(t *testing.T) {
	ts := newServer(t, nil)
	shell := string(ts.get("/", "").body)
	for _, ref := range assetRef.FindAllStringSubmatch(shell, -1) {
		r := ts.get(ref[1], "")
		if r.status != 200 || len(r.body) == 0 {
			t.Fatalf("%s: %d", ref[1], r.status)
		}
		if cc := r.header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", ref[1], cc)
		}
		checkSecurityHeaders(t, ref[1], r.header)
		if !strings.Contains(r.header.Get("Content-Type"), map[bool]string{true: "javascript", false: "css"}[strings.HasSuffix(ref[1], ".js")]) {
			t.Errorf("%s: Content-Type %q", ref[1], r.header.Get("Content-Type"))
		}
	}
	if r := ts.get("/assets/app.000000000000.js", ""); r.status != 404 {
		t.Errorf("an asset name of another build answers %d, want 404", r.status)
	}
	if web.ScriptName() == web.StyleName() || !strings.HasPrefix(web.ScriptName(), "app.") {
		t.Errorf("asset names %q and %q", web.ScriptName(), web.StyleName())
	}
}

func TestDashboardFragmentsNeedTheReadAPIsCredential(t *testing.T) {
	ts := pushed(t, func(c *server.Config) { c.ReadToken = "reader" })
	prod := ts.idAs("reader", "prod")
	for _, path := range []string{"/ui/fleet", fmt.Sprintf("/ui/clusters/%d", prod), "/ui/teams", "/ui/knowledge"} {
		r := ts.get(path, "")
		if r.status != 401 || !strings.Contains(r.json(t)["error"].(string), "read credential") {
			t.Errorf("%s without a token: %d %s", path, r.status, r.body)
		}
		checkSecurityHeaders(t, path, r.header)
		if r := ts.get(path, "wrong"); r.status != 401 {
			t.Errorf("%s with an unknown token: %d", path, r.status)
		}
		r = ts.get(path, "reader")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s with the read token: %d %s", path, r.status, r.body)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", path, cc)
		}
		checkSecurityHeaders(t, path, r.header)
		if n := strings.Count(string(r.body), "<h1"); n != 1 {
			t.Errorf("%s: %d h1 headings, want one", path, n)
		}
		if strings.Contains(string(r.body), "team-banner") {
			t.Errorf("%s: a fleet-wide token is shown a team banner", path)
		}
	}
}

func TestATeamTokenSeesABannerAndOnlyItsClusters(t *testing.T) {
	ts := pushed(t, nil)
	ops := ts.idOf("ops")
	tok := ts.mintRead("payments", "data")
	r := ts.get("/ui/fleet", tok)
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(body, `<div id="team-banner"`) {
		t.Fatalf("a team-scoped fleet fragment does not start with the banner: %d %.200s", r.status, body)
	}
	banner := body[:strings.Index(body, "</div>")]
	for _, team := range []string{"payments", "data"} {
		if !strings.Contains(banner, team) {
			t.Errorf("the banner does not name %s: %s", team, banner)
		}
	}
	if !strings.Contains(body, `data-cluster="prod"`) || strings.Contains(body, `data-cluster="ops"`) {
		t.Errorf("payments' fleet rows: %s", rowsOf(body))
	}
	if r := ts.get(fmt.Sprintf("/ui/clusters/%d", ops), tok); r.status != 404 {
		t.Errorf("another team's cluster answers %d, want the API's 404", r.status)
	}
}

var rowRE = regexp.MustCompile(`<tr data-cluster="([^"]*)"`)

// rowsOf is the cluster names of a fleet fragment's rows, in order.
func rowsOf(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// seeded is a server on a store seeded with clusters named by verdict: each dashCluster
// is stored with one evaluation at each of targets.
type dashCluster struct {
	name, verdict string
	score         int
	agentRules    string // the rules revision its agent reports, "" for none
}

func seedDashboard(t testing.TB, st store.Store, clusters []dashCluster, targets []string, key string) {
	t.Helper()
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rep := gzipBytes(t, []byte(`{"schemaVersion":1,"targets":[]}`))
	for i, c := range clusters {
		in := store.Ingest{ClusterName: c.name, ClusterUID: fmt.Sprintf("uid-%d", i), Hash: fmt.Sprint(i),
			ServerVersion: "v1.33.4", Inventory: []byte("x")}
		if c.agentRules != "" {
			in.AgentBundles = []store.Bundle{{Name: "rules", Revision: c.agentRules}}
		}
		for _, tg := range targets {
			if c.verdict == "" {
				continue
			}
			in.Evaluations = append(in.Evaluations, store.Evaluation{Target: tg, Verdict: c.verdict, Score: c.score,
				EvaluatedAt: at, BundlesKey: key, Report: rep,
				Teams: map[string]store.TeamCell{"team-" + c.verdict: {Verdict: c.verdict, Score: c.score}}})
		}
		if _, err := st.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
}

// bundlesKey is the key the shared engine's evaluations are stored with.
func bundlesKey(t testing.TB) string {
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range eng.Bundles() {
		parts = append(parts, b.Name+"@"+b.Revision)
	}
	return strings.Join(sortStrings(parts), ",")
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

var _ = json.Marshal
var _ = report.VerdictReady
