package mcpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/policies"
)

// kbAddon is the registry's entry id.
func kbAddon(t *testing.T, id string) *kb.Addon {
	t.Helper()
	addons := builtinEngine(t).KB().Addons()
	for i := range addons {
		if addons[i].ID == id {
			return &addons[i]
		}
	}
	t.Fatalf("the registry has no %s", id)
	return nil
}

func TestRegistryLookupAnswersAnAddOnAsTheKnowledgeBaseHoldsIt(t *testing.T) {
	k := builtinEngine(t).KB()
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, t.TempDir()), tr)
			for _, q := range []string{"ingress-nginx", "cert-manager", "Ingress NGINX Controller"} {
				a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": q})
				if len(a.Matches) == 0 || a.Matches[0].Addon == nil {
					t.Fatalf("%s: matches %+v, want the add-on first", q, a.Matches)
				}
				got := a.Matches[0].Addon
				want := kbAddon(t, got.ID)
				if !strings.EqualFold(q, want.ID) && !strings.EqualFold(q, want.Name) {
					t.Errorf("%s: first match %s, want the add-on it names", q, got.ID)
				}
				if !slices.Equal(got.Citations, want.Support.Citations) || got.Name != want.Name || got.Status != want.Support.Status ||
					got.EOL != want.Support.EOL || got.Recommendation != want.Recommendation {
					t.Errorf("%s = %+v, the registry holds %+v", q, got, want)
				}
				if s := k.AddonSupport(want, now); got.Support != string(s.State) {
					t.Errorf("%s: support %s, the rule's judgement on %s is %s", q, got.Support, now.Format("2006-01-02"), s.State)
				}
				if !slices.Equal(a.JudgedWith, []string{"kb " + policies.KBRevision}) || a.Today != "2026-12-01" || a.Horizon != k.Meta().Horizon {
					t.Errorf("%s: judged with %v on %s (horizon %s), want the kb bundle's revision %s on the pinned day", q, a.JudgedWith, a.Today, a.Horizon, policies.KBRevision)
				}
			}
		})
	}
}

func TestRegistryLookupJudgesSupportOnTheServersDay(t *testing.T) {
	// ingress-nginx retired with an end of life on 2026-03-24: ending before it, ended after.
	want := kbAddon(t, "ingress-nginx")
	k := builtinEngine(t).KB()
	for _, day := range []string{"2026-03-01", "2026-03-24", "2025-01-01"} {
		t.Run(day, func(t *testing.T) {
			clock, err := time.Parse(time.DateOnly, day)
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, newServer(t, t.TempDir(), func(c *mcpserver.Config) { c.Now = func() time.Time { return clock } }), pipes)
			a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": "ingress-nginx"})
			if got, s := a.Matches[0].Addon.Support, k.AddonSupport(want, clock); got != string(s.State) || a.Today != day {
				t.Errorf("support %s on %s, the rule's %s", got, a.Today, s.State)
			}
		})
	}
}

func TestRegistryLookupShowsAnAddOnsLinesAndTheirKubernetesRanges(t *testing.T) {
	want := kbAddon(t, "istio")
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": "istio"})
	got := a.Matches[0].Addon
	if len(got.Lines) == 0 || len(got.Lines)+got.More != len(want.Lines)+len(want.Compat) {
		t.Fatalf("lines %+v and %d more, the registry has %d", got.Lines, got.More, len(want.Lines))
	}
	for i, l := range got.Lines {
		w := want.Lines[i]
		if l.Line != w.Line || l.EOL != w.EOL || l.Kubernetes != w.Kubernetes.Min+"–"+w.Kubernetes.Max {
			t.Errorf("line %+v, the registry's %+v %+v", l, w, *w.Kubernetes)
		}
		if !slices.Contains(got.LineCitations, w.Citations[0]) {
			t.Errorf("line %s: its citation %s is not among %v", l.Line, w.Citations[0], got.LineCitations)
		}
	}
}

func TestRegistryLookupAnswersAnAPIByItsKeyVersionAndKindOrKind(t *testing.T) {
	k := builtinEngine(t).KB()
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"a group/version/Kind names one", "networking.k8s.io/v1beta1/Ingress", []string{"networking.k8s.io/v1beta1/Ingress"}},
		{"a version and a kind name it in every group", "v1beta1 Ingress", []string{"extensions/v1beta1/Ingress", "networking.k8s.io/v1beta1/Ingress"}},
		{"an apiVersion and a kind name one", "policy/v1beta1 PodSecurityPolicy", []string{"policy/v1beta1/PodSecurityPolicy"}},
		{"a kind names every version of it", "PodSecurityPolicy", []string{"extensions/v1beta1/PodSecurityPolicy", "policy/v1beta1/PodSecurityPolicy"}},
		{"the core group is core or nothing", "v1/Endpoints", []string{"core/v1/Endpoints"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, newServer(t, t.TempDir()), pipes)
			a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": tc.query})
			var keys []string
			for _, m := range a.Matches {
				if m.API == nil {
					continue
				}
				keys = append(keys, m.API.Key)
				e, ok := k.API(m.API.Key)
				if !ok || !slices.Equal(m.API.Citations, e.Citations) || m.API.Removed != e.Removed || m.API.Deprecated != e.Deprecated || m.API.Replacement != e.Replacement {
					t.Errorf("%+v, the knowledge base holds %+v", *m.API, e)
				}
			}
			if !slices.Equal(keys, tc.want) {
				t.Errorf("%q: %v, want %v", tc.query, keys, tc.want)
			}
		})
	}
}

func TestRegistryLookupPagesManyMatches(t *testing.T) {
	k := builtinEngine(t).KB()
	var want []string
	for _, e := range k.APIs() {
		if e.Version == "v1" {
			want = append(want, e.Key())
		}
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, t.TempDir()), tr)
			var got []string
			args := map[string]any{"query": "v1"}
			for pages := 0; ; pages++ {
				if pages > len(want) {
					t.Fatal("pages do not end")
				}
				a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", args)
				if a.First != len(got) || a.Total != len(want) {
					t.Fatalf("page from %d of %d, want from %d of %d", a.First, a.Total, len(got), len(want))
				}
				for _, m := range a.Matches {
					got = append(got, m.API.Key)
				}
				if a.Next == "" {
					break
				}
				args = map[string]any{"cursor": a.Next}
			}
			if !slices.Equal(got, want) {
				t.Errorf("paged %d keys, want the %d at v1", len(got), len(want))
			}
		})
	}
}

func TestRegistryLookupAnswersNearNamesWhenNothingMatches(t *testing.T) {
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	for _, tc := range []struct{ query, near string }{
		{"ingres-ngnix", "ingress-nginx"},
		{"PodSecurityPolcy", "PodSecurityPolicy"},
		{"cert-manger", "cert-manager"},
	} {
		a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": tc.query})
		if len(a.Matches) != 0 || a.Total != 0 || a.NoMatch == "" || len(a.Near) == 0 || a.Near[0] != tc.near {
			t.Errorf("%q: %+v, want no match and %s nearest", tc.query, a, tc.near)
		}
	}
}

func TestRegistryLookupFitsEveryAddOnAndKindInOneAnswer(t *testing.T) {
	k := builtinEngine(t).KB()
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	var queries []string
	for _, a := range k.Addons() {
		queries = append(queries, a.ID)
	}
	for _, e := range k.APIs() {
		queries = append(queries, e.Key())
	}
	for _, q := range queries {
		// call fails the test for an answer past MaxAnswer.
		if a, _ := call[mcpserver.RegistryAnswer](t, cs, "registry_lookup", map[string]any{"query": q}); len(a.Matches) == 0 {
			t.Errorf("%s: no match", q)
		}
	}
}

func TestRegistryLookupRefusesNoQuery(t *testing.T) {
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	if msg := callError(t, cs, "registry_lookup", map[string]any{"query": " "}); !strings.Contains(msg, "query:") {
		t.Errorf("error %q, want it to name the query", msg)
	}
}

func TestRegistryLookupRefusesAQueryLongerThanAnyNameBeforeSearching(t *testing.T) {
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "registry_lookup" })
	raw, err := json.Marshal(tools.Tools[i].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			MaxLength *int `json:"maxLength"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if m := schema.Properties["query"].MaxLength; m == nil || *m != 200 {
		t.Errorf("the input schema's query has maxLength %v, want 200: %s", m, raw)
	}
	// A cursor is opaque to the schema: one carrying a long query is refused as the query is.
	cursor := base64.RawURLEncoding.EncodeToString([]byte(`{"q":"` + strings.Repeat("x", 300) + `","at":0}`))
	for _, tc := range []struct {
		name string
		args map[string]any
		// want are what the refusal says; the SDK's by the schema quotes the query, clipped
		// as every refusal is, before it says the bound.
		want   []string
		atMost int
	}{
		{"a megabyte of letters, which the schema refuses", map[string]any{"query": strings.Repeat("ingress", 150_000)},
			[]string{"/properties/query", "maxLength"}, mcpserver.MaxAnswer / 2},
		{"150 two-byte letters, within the schema's 200 characters but past 200 bytes", map[string]any{"query": strings.Repeat("é", 150)},
			[]string{"query: 300 bytes", "200"}, 200},
		{"a cursor carrying 300 bytes of query", map[string]any{"cursor": cursor}, []string{"query: 300 bytes", "200"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := callError(t, cs, "registry_lookup", tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) || len(msg) > tc.atMost {
					t.Errorf("error of %d bytes %.300q, want at most %d saying %q", len(msg), msg, tc.atMost, w)
				}
			}
		})
	}
}
