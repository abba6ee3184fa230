package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/kb"
)

// linesShown is how many release lines (and compatibility intervals) of an add-on a match
// shows, newest first as the registry lists them; the rest are counted.
const linesShown = 8

// nearShown is how many near names an answer without a match suggests.
const nearShown = 5

// maxQuery is the longest query registry_lookup reads, in bytes: an add-on's id or name or an
// API's key is short, and the nearest-name search costs the query's length times every name's.
const maxQuery = 200

// RegistryInput is registry_lookup's input: a query, or the cursor of a previous page.
type RegistryInput struct {
	Query  string `json:"query,omitempty" jsonschema:"an add-on's id or name (\"ingress-nginx\", \"cert-manager\"), or an API: group/version/Kind (\"networking.k8s.io/v1beta1/Ingress\"; the core group as \"v1/Endpoints\"), a version and a kind (\"v1beta1 Ingress\"), a kind (\"PodSecurityPolicy\"), a group or a version"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer; the query travels in it"`
}

// RegistryAnswer is a page of what the knowledge base holds for a query: add-ons with their
// support judged on the server's day, and API versions with their lifecycle, each with the
// citations the knowledge base gives.
type RegistryAnswer struct {
	Query      string          `json:"query"`
	JudgedWith []string        `json:"judgedWith" jsonschema:"the knowledge base bundle and its revision"`
	Horizon    string          `json:"horizon" jsonschema:"the newest minor the knowledge base can judge"`
	Today      string          `json:"today" jsonschema:"the UTC day add-on support is judged on"`
	Total      int             `json:"total" jsonschema:"matches in all"`
	First      int             `json:"first" jsonschema:"index of the first match shown"`
	Matches    []RegistryMatch `json:"matches"`
	NoMatch    string          `json:"noMatch,omitempty" jsonschema:"why nothing matched"`
	Near       []string        `json:"near,omitempty" jsonschema:"add-on ids and API kinds or keys close to the query, to look up instead"`
	Next       string          `json:"next,omitempty" jsonschema:"cursor of the next page"`
}

// RegistryMatch is one add-on or one API version.
type RegistryMatch struct {
	Addon *AddonMatch `json:"addon,omitempty"`
	API   *APIMatch   `json:"api,omitempty"`
}

// AddonMatch is an add-on of the registry. Support is judged as the addons rule judges it,
// by the end-of-life date on the server's day, not by the registry's status word alone.
type AddonMatch struct {
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	Status         string      `json:"status" jsonschema:"the registry's word: supported or retired"`
	Support        string      `json:"support" jsonschema:"judged today: active, ending (end of life within the warning window) or ended"`
	EOL            string      `json:"eol,omitempty" jsonschema:"end of life: a date, or unknown when no source gives one"`
	ExtendedEOL    string      `json:"extendedEol,omitempty"`
	Recommendation string      `json:"recommendation,omitempty"`
	Lines          []LineMatch `json:"lines,omitempty" jsonschema:"release lines, newest first, with the Kubernetes minors each supports"`
	Compat         []LineMatch `json:"compat,omitempty" jsonschema:"version intervals and the Kubernetes minors each supports"`
	More           int         `json:"more,omitempty" jsonschema:"lines and intervals past the first, older ones, not shown"`
	Citations      []string    `json:"citations"`
	LineCitations  []string    `json:"lineCitations,omitempty" jsonschema:"the sources of the lines and intervals shown"`
}

// LineMatch is a release line or a version interval and the Kubernetes minors it supports.
type LineMatch struct {
	Line       string `json:"line"`
	Support    string `json:"support,omitempty" jsonschema:"judged today: active, ending or ended"`
	EOL        string `json:"eol,omitempty"`
	Kubernetes string `json:"kubernetes,omitempty" jsonschema:"the Kubernetes minors supported, both ends inclusive"`
}

// APIMatch is one group/version/kind of the API lifecycle table.
type APIMatch struct {
	Key         string   `json:"key" jsonschema:"group/version/Kind, core for the core group"`
	Introduced  string   `json:"introduced,omitempty"`
	Deprecated  string   `json:"deprecated,omitempty"`
	Removed     string   `json:"removed,omitempty" jsonschema:"the first minor that does not serve it"`
	Replacement string   `json:"replacement,omitempty" jsonschema:"the key of the version that replaces it"`
	Citations   []string `json:"citations"`
}

var registryLookupTool = &mcp.Tool{
	Name:  "registry_lookup",
	Title: "Look up an add-on or an API in the knowledge base",
	InputSchema: schemaFor[RegistryInput](func(s *jsonschema.Schema) {
		s.Properties["query"].MaxLength = new(maxQuery)
	}),
	Description: "Look up an add-on (support judged today, end of life, release lines and the Kubernetes minors they support, " +
		"the recommendation) or an API version (deprecated, removed, replacement) in the knowledge base the verdicts are judged with, " +
		"with its citations. Nothing found answers near names, not an error.",
}

// registryLookup answers the page of matches for the query or cursor.
func (s *Server) registryLookup(_ context.Context, in RegistryInput) (RegistryAnswer, error) {
	q, at, err := registryQuery(in)
	if err != nil {
		return RegistryAnswer{}, err
	}
	k, now := s.cfg.Engine.KB(), s.cfg.Now()
	all := lookup(k, q, now)
	a := RegistryAnswer{Query: clip(q, maxLine), JudgedWith: s.kbRevision(), Horizon: k.Meta().Horizon,
		Today: now.UTC().Format(time.DateOnly), Total: len(all), First: min(at, len(all)), Matches: []RegistryMatch{}}
	if len(all) == 0 {
		a.NoMatch = fmt.Sprintf("the knowledge base has no add-on or API matching %q", clip(q, maxLine))
		a.Near = near(q, registryNames(k), nearShown)
		return a, nil
	}
	return pageOf(all, a.First, q, func(shown []RegistryMatch, next string) RegistryAnswer {
		b := a
		b.Matches, b.Next = shown, next
		return b
	}), nil
}

// registryQuery is the query in asks, from its cursor when it has one, and the index of the
// first match to show. A query past maxQuery is refused before any search.
func registryQuery(in RegistryInput) (string, int, error) {
	q, at := strings.TrimSpace(in.Query), 0
	if in.Cursor != "" {
		var err error
		if q, at, err = decodeCursor[string](in.Cursor); err != nil {
			return "", 0, err
		}
	}
	if len(q) > maxQuery {
		return "", 0, fmt.Errorf("query: %d bytes, past the %d a name or an API key takes; ask for one add-on or API at a time", len(q), maxQuery)
	}
	if q == "" {
		return "", 0, errors.New("query: name an add-on (\"cert-manager\") or an API (\"networking.k8s.io/v1beta1/Ingress\", \"v1beta1 Ingress\", \"PodSecurityPolicy\")")
	}
	return q, at, nil
}

// kbRevision names the knowledge base bundle the engine reads, as judgedWith names bundles.
func (s *Server) kbRevision() []string {
	var out []string
	for _, b := range s.cfg.Engine.Bundles() {
		if slices.Contains(b.Roots, "upgradescope/kb") {
			out = append(out, bundleLine(b.Name, b.Revision))
		}
	}
	return out
}

// lookup is every match of q: add-ons whose id or name is q, then API versions q names, then
// add-ons whose id or name holds q.
func lookup(k *kb.KB, q string, now time.Time) []RegistryMatch {
	var exact, apis, partial []RegistryMatch
	lq := strings.ToLower(q)
	for i := range k.Addons() {
		ad := &k.Addons()[i]
		id, name := strings.ToLower(ad.ID), strings.ToLower(ad.Name)
		switch {
		case lq == id || lq == name:
			exact = append(exact, RegistryMatch{Addon: addonMatch(k, ad, now)})
		case len(lq) >= 3 && (strings.Contains(id, lq) || strings.Contains(name, lq)):
			partial = append(partial, RegistryMatch{Addon: addonMatch(k, ad, now)})
		}
	}
	for _, e := range k.APIs() {
		if apiMatches(e, q) {
			apis = append(apis, RegistryMatch{API: apiMatch(e)})
		}
	}
	return slices.Concat(exact, apis, partial)
}

// versionLike is a Kubernetes API version: v1, v2beta1, v1alpha3.
var versionLike = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// apiMatches says whether q names e: "group/version/Kind" (core for the core group) or the
// same with spaces, "group/version" or "version Kind", or one of its kind, resource, group or
// version alone. Kinds and resources compare without case.
func apiMatches(e kb.APIEntry, q string) bool {
	parts := strings.FieldsFunc(q, func(r rune) bool { return r == '/' || r == ' ' || r == '\t' })
	group := cmp.Or(e.Group, "core")
	kind := func(s string) bool { return strings.EqualFold(s, e.Kind) || strings.EqualFold(s, e.Resource) }
	switch len(parts) {
	case 1:
		p := parts[0]
		return kind(p) || p == e.Group || p == e.Version
	case 2:
		if versionLike.MatchString(parts[1]) {
			return parts[0] == group && parts[1] == e.Version
		}
		return (parts[0] == e.Version || parts[0] == group) && kind(parts[1])
	case 3:
		return parts[0] == group && parts[1] == e.Version && kind(parts[2])
	}
	return false
}

func apiMatch(e kb.APIEntry) *APIMatch {
	return &APIMatch{Key: e.Key(), Introduced: e.Introduced, Deprecated: e.Deprecated, Removed: e.Removed,
		Replacement: e.Replacement, Citations: orEmpty(e.Citations)}
}

// addonMatch is ad with its support judged on now's day and its first lines.
func addonMatch(k *kb.KB, ad *kb.Addon, now time.Time) *AddonMatch {
	m := &AddonMatch{ID: ad.ID, Name: ad.Name, Status: ad.Support.Status, Support: string(k.AddonSupport(ad, now).State),
		EOL: ad.Support.EOL, ExtendedEOL: ad.Support.ExtendedEOL, Recommendation: clip(ad.Recommendation, 2*maxLine),
		Citations: orEmpty(ad.Support.Citations)}
	var cites []string
	for i := range ad.Lines {
		l := &ad.Lines[i]
		if len(m.Lines) == linesShown {
			m.More++
			continue
		}
		m.Lines = append(m.Lines, LineMatch{Line: l.Line, Support: string(k.LineSupport(l, now).State), EOL: l.EOL, Kubernetes: kubeRange(l.Kubernetes)})
		cites = append(cites, l.Citations...)
	}
	for _, c := range ad.Compat {
		if len(m.Compat) == linesShown {
			m.More++
			continue
		}
		m.Compat = append(m.Compat, LineMatch{Line: versionRange(c.Versions), Kubernetes: kubeRange(c.Kubernetes)})
		cites = append(cites, c.Citations...)
	}
	slices.Sort(cites)
	m.LineCitations = slices.Compact(cites)
	return m
}

// kubeRange spells a range of minors: "1.27–1.30", "≥ 1.27", "≤ 1.30".
func kubeRange(r *kb.KubeRange) string {
	switch {
	case r == nil:
		return ""
	case r.Min != "" && r.Max != "":
		return r.Min + "–" + r.Max
	case r.Min != "":
		return "≥ " + r.Min
	case r.Max != "":
		return "≤ " + r.Max
	}
	return ""
}

// versionRange spells a compatibility interval's versions, its bounds in key order
// ("before 0.18.0, from 0.10.0").
func versionRange(v map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, k+" "+v[k])
	}
	return strings.Join(parts, ", ")
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// registryNames are what a query may name: add-on ids and names, API kinds and keys.
func registryNames(k *kb.KB) []string {
	var out []string
	for _, a := range k.Addons() {
		out = append(out, a.ID, a.Name)
	}
	for _, e := range k.APIs() {
		out = append(out, e.Kind, e.Key())
	}
	return out
}

// near is the n names closest to q by edit distance (case aside), nearest first, for an
// answer that found nothing to suggest what to ask instead.
func near(q string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	// The search costs q's length times every name's: a query past any name is cut.
	lq := strings.ToLower(q[:min(len(q), maxQuery)])
	var all []scored
	for _, name := range names {
		all = append(all, scored{name, distance(lq, strings.ToLower(name))})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), strings.Compare(a.name, b.name)) })
	var out []string
	for _, s := range all {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, s.name) {
			out = append(out, clip(s.name, maxLine))
		}
	}
	return out
}

// distance is the Levenshtein distance of a and b, by bytes.
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
