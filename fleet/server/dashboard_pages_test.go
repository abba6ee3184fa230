package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/inventory"
)

var articleRE = regexp.MustCompile(`<article class="finding" id="finding-[^"]*" data-key="([^"]*)"`)

// findingKeys is the keys of a cluster fragment's findings, in order.
func findingKeys(body string) []string {
	var out []string
	for _, m := range articleRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestTheClusterFragmentShowsWhatTheClusterPageNeeds(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idOf("prod")), "").body)
	for _, want := range []string{
		"<h1>prod</h1>",
		`<section id="targets"`, `data-target="1.33" data-verdict="blocked" aria-current="true"`,
		`<form id="finding-filters"`, `<select id="f-category" name="category">`, `<select id="f-severity" name="severity">`,
		`<select id="f-team" name="team">`, `<input id="f-q" name="q" type="search"`,
		`<section data-severity="blocker"`, `<section data-severity="info"`,
		`id="finding-removed-api-extensions-v1beta1-ingress" data-key="removed-api/extensions/v1beta1/Ingress" data-category="removed-api" data-severity="blocker"`,
		"<li>shop/a</li>", "<strong>Fix:</strong> Migrate manifests and clients to networking.k8s.io/v1 Ingress",
		`<a href="https://kubernetes.io/docs/reference/using-api/deprecation-guide/" rel="noreferrer noopener">`,
		`<section id="gaps"`, `<section id="history"`, `<svg class="chart"`, `<table id="teams-table">`,
		`<tr data-team="payments" data-verdict="blocked">`, `<section id="bundles"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the cluster fragment lacks %s", want)
		}
	}
	if got := findingKeys(body); strings.Join(got, " ") != "removed-api/extensions/v1beta1/Ingress removed-api/policy/v1beta1/PodSecurityPolicy deprecated-api/core/v1/Endpoints" {
		t.Errorf("findings in order %v: blockers first", got)
	}
}

func TestTheClusterFragmentFiltersFindings(t *testing.T) {
	ts := pushed(t, nil)
	prod := ts.idOf("prod")
	cases := []struct{ name, query, want string }{
		{"by category", "category=removed-api", "removed-api/extensions/v1beta1/Ingress removed-api/policy/v1beta1/PodSecurityPolicy"},
		{"by severity", "severity=info", "deprecated-api/core/v1/Endpoints"},
		{"by team", "team=data", "deprecated-api/core/v1/Endpoints"},
		{"by text in the title, any case", "q=PODSECURITY", "removed-api/policy/v1beta1/PodSecurityPolicy"},
		{"by text in an object's namespace/name", "q=shop/a", "removed-api/extensions/v1beta1/Ingress"},
		{"filters combine", "category=removed-api&team=data", ""},
		{"at a stored target", "target=1.33&severity=blocker", "removed-api/extensions/v1beta1/Ingress removed-api/policy/v1beta1/PodSecurityPolicy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.get(fmt.Sprintf("/ui/clusters/%d?%s", prod, tc.query), "")
			if got := strings.Join(findingKeys(string(r.body)), " "); r.status != 200 || got != tc.want {
				t.Errorf("?%s: %d, findings %q, want %q", tc.query, r.status, got, tc.want)
			}
		})
	}
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d?team=data&severity=info", prod), "").body)
	for _, want := range []string{`<option value="data" selected>`, `<option value="info" selected>`, `1 of 3 findings`} {
		if !strings.Contains(body, want) {
			t.Errorf("the filtered fragment lacks %s", want)
		}
	}
}

func TestADeepLinkOpensAndMarksItsFinding(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d?finding=removed-api%%2Fpolicy%%2Fv1beta1%%2FPodSecurityPolicy", ts.idOf("prod")), "").body)
	current := regexp.MustCompile(`<article [^>]*data-key="([^"]*)"[^>]*aria-current="true"[^>]*>.*?<details open>`).FindAllStringSubmatch(body, -1)
	if len(current) != 1 || current[0][1] != "removed-api/policy/v1beta1/PodSecurityPolicy" {
		t.Errorf("findings marked current and open: %v", current)
	}
	if strings.Count(body, `aria-current="true"`) != 2 { // the finding and the target
		t.Errorf("aria-current appears %d times, want the finding's and the target's", strings.Count(body, `aria-current="true"`))
	}
	link := fmt.Sprintf(`href="/clusters/%d?finding=removed-api%%2Fextensions%%2Fv1beta1%%2FIngress&amp;target=1.33"`, ts.idOf("prod"))
	if !strings.Contains(body, link) {
		t.Errorf("each finding's title is no deep link to it (%s)", link)
	}
}

func TestTheClusterFragmentSaysWhatEachGapHides(t *testing.T) {
	ts := pushed(t, nil)
	doc := teamsInventory(t)
	doc.ClusterID = "gappy-uid"
	doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false, Reason: "secrets: forbidden"}
	delete(doc.Capabilities, inventory.CapAPIUsage)
	if r := ts.push("shared", envelope(t, "gappy", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idOf("gappy")), "").body)
	gaps := body[strings.Index(body, `<section id="gaps"`):]
	gaps = gaps[:strings.Index(gaps, "</section>")]
	for _, want := range []string{
		`<li data-capability="api-usage"><strong>api-usage</strong>, required: the verdict is unknown without it. Hides objects stored at deprecated or removed APIs`,
		`<li data-capability="helm"><strong>helm</strong>, optional: the verdict stands. Hides Helm releases`,
		"Why: secrets: forbidden",
	} {
		if !strings.Contains(gaps, want) {
			t.Errorf("the gaps lack %q: %s", want, gaps)
		}
	}
}

func TestATeamTokensClusterPageShowsItsShareOnly(t *testing.T) {
	ts := pushed(t, nil)
	doc := teamsInventory(t)
	doc.ClusterID = "gappy-uid"
	doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false, Reason: "data/secret-release: forbidden"}
	if r := ts.push("shared", envelope(t, "gappy", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	tok := ts.mintRead("data")
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idAs(tok, "gappy")), tok).body)
	if !strings.HasPrefix(body, `<div id="team-banner"`) {
		t.Errorf("no team banner: %.120s", body)
	}
	// The PodSecurityPolicy is cluster-scoped, no team's: every team's share holds it.
	if got := strings.Join(findingKeys(body), " "); got != "removed-api/policy/v1beta1/PodSecurityPolicy deprecated-api/core/v1/Endpoints" {
		t.Errorf("data sees findings %q; want its own and no team's", got)
	}
	if strings.Contains(body, "secret-release") || !strings.Contains(body, "withheld from team-scoped readers") {
		t.Errorf("a gap's reason is not withheld from a team-scoped reader")
	}
	if strings.Contains(body, `<tr data-team="payments"`) {
		t.Errorf("data sees payments' rollup")
	}
}

func TestAClusterOfUnknownVersionHasAPageSayingSo(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.Targets = []string{"1.35"} })
	seedDashboard(t, ts.store, []dashCluster{{name: "mystery"}}, nil, bundlesKey(t))
	r := ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idOf("mystery")), "")
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, "<h1>mystery</h1>") || !strings.Contains(body, "version is unknown") ||
		!strings.Contains(body, `data-target="1.35" data-verdict="none"`) {
		t.Errorf("a cluster without a known version: %d %s", r.status, body)
	}
}

func TestAClusterOfUnknownVersionWithoutPlannedTargetsOffersATargetForm(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := teamsInventory(t)
	doc.ServerVersion = ""
	if r := ts.push("shared", envelope(t, "mystery", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	id := ts.idOf("mystery")
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", id), "").body)
	for _, want := range []string{
		fmt.Sprintf(`<form id="target-form" class="controls" method="get" action="/clusters/%d"`, id),
		`<label for="target-input">Target (MAJOR.MINOR)`, `<input id="target-input" name="target"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("a cluster with no target to pick: the page lacks %s", want)
		}
	}
	if strings.Contains(body, `id="history"`) || strings.Contains(body, "Score history at Kubernetes <") {
		t.Errorf("without a target the page has a score history section")
	}
	asked := string(ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.35", id), "").body)
	if !strings.Contains(asked, `<h2 id="history-h">Score history at Kubernetes 1.35</h2>`) || strings.Contains(asked, `id="target-form"`) {
		t.Errorf("with ?target=1.35 the page does not show 1.35's history in place of the form: %s", asked)
	}
}

func TestTheClusterFragmentRefusesBadInputAsTheAPIDoes(t *testing.T) {
	ts := pushed(t, nil)
	prod := ts.idOf("prod")
	cases := []struct {
		path   string
		status int
		msg    string
	}{
		{"/ui/clusters/x", 400, "cluster id"},
		{"/ui/clusters/999", 404, "cluster not found"},
		{fmt.Sprintf("/ui/clusters/%d?severity=fatal", prod), 422, "severity"},
		{fmt.Sprintf("/ui/clusters/%d?target=1.31", prod), 422, "target 1.31"},
		{fmt.Sprintf("/ui/clusters/%d?target=latest", prod), 422, "target"},
	}
	for _, tc := range cases {
		r := ts.get(tc.path, "")
		if r.status != tc.status || !strings.Contains(r.json(t)["error"].(string), tc.msg) {
			t.Errorf("%s: %d %s, want %d naming %q", tc.path, r.status, r.body, tc.status, tc.msg)
		}
	}
}

func TestTheTeamsFragmentRollsUpEachTeamsWorstVerdict(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get("/ui/teams", "").body)
	if r := ts.get("/ui/teams?target=next", ""); r.status != 422 || !strings.Contains(r.json(t)["error"].(string), "target") {
		t.Errorf("?target=next: %d %s", r.status, r.body)
	}
	for _, want := range []string{`<table id="teams">`, `<tr data-team="payments" data-verdict="blocked">`, `<tr data-team="platform" data-verdict="blocked">`,
		fmt.Sprintf(`<a href="/clusters/%d?team=platform">ops</a>`, ts.idOf("ops"))} {
		if !strings.Contains(body, want) {
			t.Errorf("the teams fragment lacks %s", want)
		}
	}
	scoped := string(ts.get("/ui/teams", ts.mintRead("platform")).body)
	if !strings.Contains(scoped, `data-team="platform"`) || strings.Contains(scoped, `data-team="payments"`) {
		t.Errorf("platform's teams page shows other teams")
	}
}

func TestTheKnowledgeFragmentShowsTheActiveKnowledgeBaseSearchably(t *testing.T) {
	ts := newServer(t, nil)
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	body := string(ts.get("/ui/knowledge", "").body)
	if n := strings.Count(body, "<tr data-addon="); n != len(eng.KB().Addons()) || n == 0 {
		t.Errorf("%d add-on rows, the registry has %d", n, len(eng.KB().Addons()))
	}
	if n := strings.Count(body, "<tr data-api="); n != len(eng.KB().APIs()) || n == 0 {
		t.Errorf("%d API rows, the table has %d", n, len(eng.KB().APIs()))
	}
	for _, want := range []string{`<input id="k-q" name="q" type="search"`, `<table id="addons">`, `<table id="apis">`,
		`<tr data-api="extensions/v1beta1/Ingress"><th scope="row">extensions/v1beta1/Ingress</th><td>1.1</td><td>1.14</td><td>1.22</td><td>networking.k8s.io/v1/Ingress</td>`,
		`<tr data-addon="containerd" data-support="active">`, `<li data-line="1.7" data-support="ended">1.7: ended on 2026-03-10`, "horizon Kubernetes " + eng.KB().Meta().Horizon} {
		if !strings.Contains(body, want) {
			t.Errorf("the knowledge fragment lacks %s", want)
		}
	}
	found := string(ts.get("/ui/knowledge?q=ContainerD", "").body)
	if strings.Count(found, "<tr data-addon=") != 1 || !strings.Contains(found, `<tr data-addon="containerd" `) || strings.Contains(found, "<tr data-api=") {
		t.Errorf("?q=ContainerD does not keep containerd alone")
	}
	ingress := string(ts.get("/ui/knowledge?q=v1beta1/ingress", "").body)
	if !strings.Contains(ingress, `data-api="extensions/v1beta1/Ingress"`) || strings.Contains(ingress, `data-api="batch/v1/Job"`) {
		t.Errorf("?q=v1beta1/ingress does not select the API")
	}
}

// under requests prefix+path and checks the answer against the contract as the path
// without the prefix: the document describes the routes, wherever they are mounted.
func (ts *testServer) under(prefix, method, path, token string, body []byte, header http.Header) response {
	ts.t.Helper()
	req, err := http.NewRequestWithContext(ts.t.Context(), method, ts.URL+prefix+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := *ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	if path != "" && resp.StatusCode != 404 && resp.StatusCode != 301 {
		as := req.Clone(req.Context())
		as.URL.Path = path
		checkContract(ts.t, as, resp.StatusCode, resp.Header, data)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func TestUnderAPathPrefixEverythingIsServedThereAndNothingElsewhere(t *testing.T) {
	const p = "/upgradescope"
	ts := newServer(t, func(c *server.Config) { c.IngestToken, c.PathPrefix = "shared", p+"/" })
	push := ts.under(p, "POST", push.Path, "shared", envelope(t, "prod", teamsInventory(t)),
		http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}})
	if push.status != 202 {
		t.Fatalf("a push under the prefix: %d %s", push.status, push.body)
	}
	for _, path := range []string{"/", "/clusters/1", "/teams", "/knowledge", "/healthz", "/readyz", "/api/v1/fleet", "/api/v1/clusters/1",
		"/ui/fleet", "/ui/clusters/1", "/ui/teams", "/ui/knowledge"} {
		if r := ts.under(p, "GET", path, "", nil, nil); r.status != 200 {
			t.Errorf("%s%s: %d %s", p, path, r.status, r.body)
		}
		if r := ts.under("", "GET", path, "", nil, nil); r.status != 404 {
			t.Errorf("%s outside the prefix: %d, want 404", path, r.status)
		}
	}
	if r := ts.under("", "GET", p, "", nil, nil); r.status != 301 || r.header.Get("Location") != p+"/" {
		t.Errorf("%s: %d to %q, want 301 to %s/", p, r.status, r.header.Get("Location"), p)
	}
	if r := ts.under("", "GET", p+"x/", "", nil, nil); r.status != 404 {
		t.Errorf("%sx/: %d, want 404", p, r.status)
	}
	shell := string(ts.under(p, "GET", "/", "", nil, nil).body)
	refs := assetRef.FindAllStringSubmatch(shell, -1)
	if len(refs) != 2 || !strings.Contains(shell, `<body data-prefix="/upgradescope">`) {
		t.Fatalf("the shell under the prefix: %s", shell)
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref[1], p+"/assets/") {
			t.Errorf("the shell links %s, outside the prefix", ref[1])
		}
		if r := ts.under(p, "GET", strings.TrimPrefix(ref[1], p), "", nil, nil); r.status != 200 {
			t.Errorf("%s: %d", ref[1], r.status)
		}
	}
	fleet := string(ts.under(p, "GET", "/ui/fleet", "", nil, nil).body)
	for _, attr := range regexp.MustCompile(`(?:href|action)="([^"]*)"`).FindAllStringSubmatch(fleet, -1) {
		if !strings.HasPrefix(attr[1], p+"/") {
			t.Errorf("the fleet fragment links %s, outside the prefix", attr[1])
		}
	}
	if !regexp.MustCompile(`<a href="/upgradescope/clusters/1(\?target=1\.[0-9]+)?">prod</a>`).MatchString(fleet) {
		t.Errorf("the cluster link does not carry the prefix")
	}
}

func TestUnderAPathPrefixNoRedirectLeavesItAndNoneDropsTheQuery(t *testing.T) {
	const p = "/upgradescope"
	ts := newServer(t, func(c *server.Config) { c.PathPrefix = p })
	for _, path := range []string{"/api", "/api/", "/api/v1", "/healthz/", "/clusters", "/ui"} {
		r := ts.under(p, "GET", path, "", nil, nil)
		if loc := r.header.Get("Location"); loc != "" && !strings.HasPrefix(loc, p+"/") {
			t.Errorf("%s%s: %d redirects to %s, outside the prefix", p, path, r.status, loc)
		}
	}
	if r := ts.under(p, "GET", "/api", "", nil, nil); r.status != 404 || r.json(t)["error"] == nil {
		t.Errorf("%s/api: %d %s, want the JSON 404", p, r.status, r.body)
	}
	if r := ts.under("", "GET", p+"?q=ops&verdict=blocked", "", nil, nil); r.status != 301 || r.header.Get("Location") != p+"/?q=ops&verdict=blocked" {
		t.Errorf("%s?q=ops&verdict=blocked: %d to %q, want 301 keeping the query", p, r.status, r.header.Get("Location"))
	} else {
		checkSecurityHeaders(t, "the redirect to "+p+"/", r.header)
	}
}

func TestEveryErrorOutsideTheRoutesCarriesTheSecurityHeaders(t *testing.T) {
	const p = "/upgradescope"
	for _, prefix := range []string{"", p} {
		ts := newServer(t, func(c *server.Config) { c.PathPrefix = prefix })
		for _, path := range []string{"/clusters/1/", "/nope", "/teams/x"} {
			r := ts.under(prefix, "GET", path, "", nil, nil)
			if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.json(t)["error"] == nil {
				t.Errorf("%s%s: %d %s %s, want the JSON 404", prefix, path, r.status, r.header.Get("Content-Type"), r.body)
			}
			checkSecurityHeaders(t, prefix+path, r.header)
		}
		if r := ts.under(prefix, "POST", "/teams", "", nil, nil); r.status != 405 || !strings.Contains(r.header.Get("Allow"), "GET") || r.json(t)["error"] == nil {
			t.Errorf("POST %s/teams: %d Allow %q %s, want the JSON 405 allowing GET", prefix, r.status, r.header.Get("Allow"), r.body)
		}
		req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+prefix+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "attacker.example"
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 421 {
			t.Errorf("a rebound name: %d, want 421", resp.StatusCode)
		}
		checkSecurityHeaders(t, "421 at "+prefix+"/", resp.Header)
	}
	ts := newServer(t, func(c *server.Config) { c.PathPrefix = p })
	r := ts.under("", "GET", "/clusters/1", "", nil, nil)
	if r.status != 404 {
		t.Errorf("/clusters/1 outside the prefix: %d, want 404", r.status)
	}
	checkSecurityHeaders(t, "/clusters/1 outside the prefix", r.header)
}

func TestAPathPrefixIsCheckedWhenTheServerIsBuilt(t *testing.T) {
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"upgradescope", "/a b", "/a/../b", "/{x}", "/a?b"} {
		if _, err := server.New(server.Config{Store: newServer(t, nil).store, Engine: eng, PathPrefix: bad}); err == nil || !strings.Contains(err.Error(), "path prefix") {
			t.Errorf("prefix %q: %v", bad, err)
		}
	}
	for in, want := range map[string]string{"": "", "/": "", "/upgradescope/": "/upgradescope", "/a/b": "/a/b"} {
		if got, err := server.NormalPathPrefix(in); err != nil || got != want {
			t.Errorf("NormalPathPrefix(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
