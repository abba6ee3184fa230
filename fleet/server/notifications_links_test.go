package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/inventory"
)

// queuedBody pushes a ready then a blocked teams inventory under prefix and answers the
// one message queued: new blockers at 1.33.
func queuedBody(t *testing.T, ts *testServer, prefix string) notify.Body {
	t.Helper()
	gz := http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}}
	for i, doc := range []*inventory.Document{readyInventory(t), teamsInventory(t)} {
		if r := ts.under(prefix, "POST", push.Path, "shared", envelope(t, "prod", doc), gz); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	ds, err := ts.store.ClaimDeliveries(t.Context(), time.Now().Add(time.Second), time.Minute, 10, []string{"webhook"})
	if err != nil || len(ds) != 1 {
		t.Fatalf("ClaimDeliveries = %d, %v; want one message", len(ds), err)
	}
	var b notify.Body
	if err := json.Unmarshal(ds[0].Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestANotificationLinksTheClusterPageUnderThePublicURLAndNamesTheOwners(t *testing.T) {
	hook, _ := notify.NewWebhook("http://127.0.0.1:9/never-called", "")
	for _, tc := range []struct {
		name, publicURL, prefix string
		want                    string
		// ours: the link's path is this server's own, so it can be opened here.
		ours bool
	}{
		{"without a public URL there is no link, whatever Host the push came to", "", "", "", false},
		{"a public URL with no path gets the path prefix", "https://fleet.example.com", "/upgradescope",
			"https://fleet.example.com/upgradescope/clusters/%d", true},
		{"a public URL's own path is kept, for a proxy that maps it onto the prefix", "https://ops.example.com/fleet/",
			"/upgradescope", "https://ops.example.com/fleet/clusters/%d", false},
		{"a public URL naming the prefix is taken as given", "http://fleet.internal:8080/upgradescope", "/upgradescope",
			"http://fleet.internal:8080/upgradescope/clusters/%d", true},
		{"a public URL without a prefix", "https://fleet.example.com/", "", "https://fleet.example.com/clusters/%d", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(c *server.Config) {
				c.IngestToken, c.PublicURL, c.PathPrefix = "shared", tc.publicURL, tc.prefix
				c.Sinks = []notify.Sink{hook}
			})
			b := queuedBody(t, ts, tc.prefix)
			want := tc.want
			if want != "" {
				// At the target that changed, not the page's default (the next minor).
				want = fmt.Sprintf(tc.want, b.Cluster.ID) + "?target=1.33"
			}
			if b.Cluster.URL != want {
				t.Errorf("cluster.url %q, want %q", b.Cluster.URL, want)
			}
			for _, c := range b.Changes {
				if link := want + "&finding=" + url.QueryEscape(c.Key); want != "" && c.URL != link || want == "" && c.URL != "" {
					t.Errorf("change %s links %q, want %q", c.Key, c.URL, link)
				}
			}
			var owners []string
			for _, c := range b.Changes {
				owners = append(owners, fmt.Sprintf("%s %v", c.Key, c.Teams))
			}
			if got := strings.Join(owners, "; "); got != "removed-api/extensions/v1beta1/Ingress [payments]; "+
				"removed-api/policy/v1beta1/PodSecurityPolicy []" {
				t.Errorf("owners %s: want the Ingress in shop owned by payments, the cluster-scoped policy by no team", got)
			}
			if !tc.ours {
				return
			}
			// Where the public URL is this server's own path, the link opens the cluster's page.
			u, _ := url.Parse(want)
			page := strings.TrimPrefix(u.Path, tc.prefix)
			if r := ts.under(tc.prefix, "GET", page, "", nil, nil); r.status != http.StatusOK {
				t.Errorf("GET %s: %d, want the cluster page", u.Path, r.status)
			}
			if r := ts.under(tc.prefix, "GET", "/ui"+page, "", nil, nil); !strings.Contains(string(r.body), "<h1>prod</h1>") {
				t.Errorf("GET %s/ui%s: %d, want prod's page", tc.prefix, page, r.status)
			}
			if tc.prefix != "" {
				return
			}
			// A change's link opens its finding at its target.
			c := b.Changes[0]
			f, _ := url.Parse(c.URL)
			body := string(ts.get("/ui"+page+"?"+f.RawQuery, "").body)
			if !strings.Contains(body, `data-key="`+c.Key+`"`) || strings.Contains(body, "is not among the findings shown") ||
				!strings.Contains(body, "At Kubernetes 1.33") {
				t.Errorf("GET %s: the page does not open the finding %s at 1.33", c.URL, c.Key)
			}
		})
	}
}

func TestAPublicURLIsAnAbsoluteHTTPURLWithoutUserInformationQueryOrFragment(t *testing.T) {
	for _, tc := range []struct {
		raw, want, err string
	}{
		{"", "", ""},
		{"https://fleet.example.com", "https://fleet.example.com", ""},
		{"https://fleet.example.com/ops/upgrades/", "https://fleet.example.com/ops/upgrades", ""},
		{"http://10.0.0.7:8080", "http://10.0.0.7:8080", ""},
		{"fleet.example.com", "", "want an absolute http or https URL"},
		{"/upgradescope", "", "want an absolute http or https URL"},
		{"ftp://fleet.example.com", "", "want an absolute http or https URL"},
		{"https://", "", "want an absolute http or https URL"},
		{"https://admin:hunter2@fleet.example.com", "", "remove the user information"},
		{"ftp://admin:hunter2@fleet.example.com", "", "remove the user information"},
		{"https://admin:hunter2@fleet example.com", "", "is not a URL"},
		{"https://fleet.example.com/?team=payments", "", "remove the query and the fragment"},
		{"https://fleet.example.com/?", "", "remove the query and the fragment"},
		{"https://fleet.example.com/#top", "", "remove the query and the fragment"},
		{"https://fleet.example.com/#", "", "remove the query and the fragment"},
		{"https://fleet example.com", "", "is not a URL"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := server.NormalPublicURL(tc.raw)
			if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalPublicURL(%q) = %q, %v; want %q, an error saying %q", tc.raw, got, err, tc.want, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
			eng, _ := sharedEngine()
			_, err = server.New(server.Config{Store: newServer(t, nil).store, Engine: eng, PublicURL: tc.raw})
			if (err == nil) != (tc.err == "") {
				t.Errorf("server.New with PublicURL %q: %v", tc.raw, err)
			}
		})
	}
}
