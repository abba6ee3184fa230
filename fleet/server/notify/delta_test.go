package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/upgradescope/upgradescope/report"
)

func blocker(key string) report.Finding {
	return report.Finding{Key: key, Category: strings.Split(key, "/")[0], Severity: report.SeverityBlocker, Title: "blocker " + key}
}

func eolWarning(key string) report.Finding {
	return report.Finding{Key: key, Category: CategoryEOLApproaching, Severity: report.SeverityWarning, Title: "eol " + key}
}

func result(verdict string, fs ...report.Finding) *report.TargetResult {
	tr := &report.TargetResult{Target: "1.33", Verdict: verdict, Score: 100, Findings: fs}
	for _, f := range fs {
		if f.Severity == report.SeverityBlocker {
			tr.Blockers++
		}
	}
	return tr
}

func gap(tr *report.TargetResult) *report.TargetResult {
	tr.NotAssessed = []report.Gap{{Capability: "helm", Reason: "forbidden"}}
	return tr
}

// carriedSets are the carried sets of the baselines carrying built; other baselines carry
// their own blockers.
var carriedSets = map[*report.TargetResult][]string{}

// carrying marks tr as a baseline that carries keys.
func carrying(tr *report.TargetResult, keys ...string) *report.TargetResult {
	carriedSets[tr] = keys
	return tr
}

// changeList names changes as "kind key" for comparing.
func changeList(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, strings.TrimSpace(c.Kind+" "+c.Key))
	}
	return strings.Join(out, ", ")
}

func TestBaselineSemantics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur *report.TargetResult
		want      string
	}{
		{"the first evaluation of a target is silent",
			nil, result("blocked", blocker("removed-api/a")), ""},
		{"an unknown pass is silent, whatever it found",
			result("ready"), result("unknown", blocker("removed-api/a")), ""},
		{"a blocker whose key the baseline lacked is new",
			result("blocked", blocker("removed-api/a")), result("blocked", blocker("removed-api/a"), blocker("removed-api/b")),
			"new-blocker removed-api/b"},
		{"a blocker the baseline had is not new, and one listed twice is new once",
			result("ready"), result("blocked", blocker("eol-addon/x"), blocker("eol-addon/x")), "new-blocker eol-addon/x"},
		{"a baseline warning that became a blocker is a new blocker",
			result("ready", report.Finding{Key: "skew/k", Severity: report.SeverityWarning, Title: "w"}),
			result("blocked", blocker("skew/k")), "new-blocker skew/k"},
		{"a finding without a key is known by its title",
			result("blocked", report.Finding{Severity: report.SeverityBlocker, Title: "t"}),
			result("blocked", report.Finding{Severity: report.SeverityBlocker, Title: "t"}), ""},
		{"ready after a blocked baseline is became-ready",
			result("blocked", blocker("removed-api/a")), result("ready"), "became-ready"},
		{"ready after a ready baseline announces nothing",
			result("ready"), result("ready"), ""},
		{"ready with an optional capability not assessed after a blocked baseline is became-ready",
			result("blocked", blocker("helm-chart/a")), gap(result("ready")), "became-ready"},
		{"ready with a gap after a ready baseline announces nothing",
			result("ready"), gap(result("ready")), ""},
		{"a blocker a ready baseline of an earlier release carried through its gap is not new",
			carrying(gap(result("ready")), "helm-chart/a"), result("blocked", blocker("helm-chart/a")), ""},
		{"ready after a ready baseline of an earlier release that carried a blocker is became-ready",
			carrying(gap(result("ready")), "helm-chart/a"), result("ready"), "became-ready"},
		{"a blocked baseline with a gap carries its baseline's blocker too",
			carrying(gap(result("blocked", blocker("removed-api/b"))), "helm-chart/a", "removed-api/b"),
			result("blocked", blocker("helm-chart/a"), blocker("removed-api/c")), "new-blocker removed-api/c"},
		{"a new eol-approaching warning is announced, a known one is not",
			result("ready", eolWarning("eol-approaching/cert-manager/1.14")),
			result("ready", eolWarning("eol-approaching/cert-manager/1.14"), eolWarning("eol-approaching/ingress-nginx")),
			"eol-approaching eol-approaching/ingress-nginx"},
		{"a warning of another category is not eol-approaching",
			result("ready"), result("ready", report.Finding{Key: "deprecated-api/x", Category: "deprecated-api",
				Severity: report.SeverityWarning, Title: "w"}), ""},
		{"changes are listed new blockers first, then became-ready, then eol",
			result("blocked", blocker("removed-api/a")),
			result("blocked", eolWarning("eol-approaching/x"), blocker("removed-api/b")),
			"new-blocker removed-api/b, eol-approaching eol-approaching/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base *Baseline
			if tc.base != nil {
				base = &Baseline{Result: tc.base, Carried: carriedSets[tc.base]}
			}
			if got := changeList(Compare(base, *tc.cur)); got != tc.want {
				t.Errorf("Compare = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestABlockedPassCarriesTheBaselinesBlockersThroughAGap(t *testing.T) {
	base := &Baseline{Result: result("blocked", blocker("helm-chart/a")), Carried: []string{"helm-chart/a", "x/old"}}
	for _, tc := range []struct {
		name string
		base *Baseline
		cur  *report.TargetResult
		want string
	}{
		{"a pass with everything assessed carries its own blockers", base,
			result("blocked", blocker("removed-api/b"), blocker("removed-api/b")), "[removed-api/b]"},
		{"a ready pass with a gap carries nothing: it is ready, and became-ready said so", base, gap(result("ready")), "[]"},
		{"a blocked pass with a gap carries both", base, gap(result("blocked", blocker("removed-api/b"))),
			"[helm-chart/a removed-api/b x/old]"},
		{"a baseline from before carried sets carries its own blockers",
			&Baseline{Result: result("blocked", blocker("helm-chart/a"))}, gap(result("blocked", blocker("removed-api/b"))),
			"[helm-chart/a removed-api/b]"},
		{"without a baseline, a gap carries nothing more", nil, gap(result("blocked", blocker("removed-api/b"))), "[removed-api/b]"},
		{"an unknown pass carries nothing", base, gap(result("unknown")), "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(Carry(tc.base, *tc.cur)); got != tc.want {
				t.Errorf("Carry = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestABodyMergesTargetsAndCapsEachKindAtFive(t *testing.T) {
	var at32, at33 []Change
	for i := range 7 {
		f := blocker(fmt.Sprintf("removed-api/k%d", i))
		f.Teams = []string{"payments"}
		at33 = append(at33, change(KindNewBlocker, f, "1.33"))
		if i < 2 {
			f.Title += " (2 objects)" // a title may count; the key decides what is the same
			f.Teams = []string{"payments", "data"}
			at32 = append(at32, change(KindNewBlocker, f, "1.32"))
		}
	}
	at32 = append(at32, Change{Kind: KindBecameReady, Severity: "info", Title: "ready for 1.32", Targets: []string{"1.32"}})
	b := NewBody(Cluster{ID: 7, Name: "prod"}, "https://fleet.example.com/upgradescope/clusters/7", []TargetDelta{
		{Target: Target{Target: "1.32", Verdict: "ready", Score: 100}, Changes: at32},
		{Target: Target{Target: "1.33", Verdict: "blocked", Score: 25, Blockers: 7}, Changes: at33},
	}, time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600)))
	if len(b.Changes) != 6 || b.Omitted[KindNewBlocker] != 2 || len(b.Omitted) != 1 {
		t.Fatalf("changes %s, omitted %v: want 5 new blockers, became-ready, 2 omitted", changeList(b.Changes), b.Omitted)
	}
	if got := b.Changes[0].Targets; !slices.Equal(got, []string{"1.32", "1.33"}) {
		t.Errorf("a blocker new at both targets lists %v, want both", got)
	}
	if got := b.Changes[0].Teams; !slices.Equal(got, []string{"data", "payments"}) {
		t.Errorf("a blocker owned by other teams at each target lists teams %v, want both, sorted", got)
	}
	if b.Changes[5].Teams != nil {
		t.Errorf("became-ready names teams %v, want none", b.Changes[5].Teams)
	}
	if b.Changes[5].Kind != KindBecameReady || b.Timestamp != "2026-11-30T11:00:00Z" || len(b.DeliveryID) != 32 {
		t.Errorf("body %+v: want became-ready last, a UTC timestamp and a 32-digit delivery id", b)
	}
	// The links open the page at the change's own target, not the cluster's next minor.
	page := "https://fleet.example.com/upgradescope/clusters/7"
	if b.Cluster.URL != page+"?target=1.32" {
		t.Errorf("cluster.url %q, want the page at the first change's first target, 1.32", b.Cluster.URL)
	}
	for _, c := range b.Changes {
		want := page + "?target=" + c.Targets[0]
		if c.Key != "" {
			want += "&finding=" + url.QueryEscape(c.Key)
		}
		if c.URL != want {
			t.Errorf("change %s links %q, want %q", c.Key, c.URL, want)
		}
	}
	raw, _ := json.Marshal(b)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := webhookSchema(t).Validate(v); err != nil {
		t.Errorf("body does not validate: %v\n%s", err, raw)
	}
	if NewBody(Cluster{ID: 7, Name: "prod"}, "", []TargetDelta{{Target: Target{Target: "1.33"}}}, time.Now()) != nil {
		t.Error("a pass without changes built a body, want none")
	}
	if other := NewBody(Cluster{ID: 7, Name: "prod"}, "", []TargetDelta{{Changes: at33}}, time.Now()); other.DeliveryID == b.DeliveryID {
		t.Error("two bodies share a delivery id")
	} else if other.Cluster.URL != "" || other.Changes[0].URL != "" {
		t.Errorf("a body without a page links %q and %q, want nothing", other.Cluster.URL, other.Changes[0].URL)
	}
}

func TestThePublishedSchemaLetsReceiversIgnoreUnknownMembers(t *testing.T) {
	raw := `{"schemaVersion": 1, "deliveryId": "6f1c9e0d4b2a48a1b3c5d7e9f0a1b2c3", "type": "readiness.changed",
		"timestamp": "2026-11-30T12:00:00Z", "cluster": {"id": 7, "name": "prod", "region": "eu"},
		"targets": [{"target": "1.33", "verdict": "ready", "score": 100, "blockers": 0}],
		"changes": [{"kind": "became-ready", "severity": "info", "title": "ready", "targets": ["1.33"]}], "later": true}`
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileWebhookSchema(t, false).Validate(v); err != nil {
		t.Errorf("a body with members added later does not validate: %v", err)
	}
	if err := webhookSchema(t).Validate(v); err == nil {
		t.Error("the closed schema the tests check bodies with accepts unknown members")
	}
}

func TestSlackTextIsOneLineForOneChangeElseAHeaderAndBullets(t *testing.T) {
	one := &Body{Cluster: Cluster{Name: "prod<1>"}, Changes: []Change{{Kind: KindBecameReady,
		Title: "ready for 1.33: all blockers resolved", Targets: []string{"1.33"}}}}
	if got, want := SlackText(one), "[upgradescope] prod&lt;1&gt; → 1.33: became-ready: ready for 1.33: all blockers resolved"; got != want {
		t.Errorf("one change:\n%s\nwant\n%s", got, want)
	}
	many := &Body{Cluster: Cluster{Name: "prod", URL: "https://fleet.example.com/a|b&c/clusters/7"}, Changes: []Change{
		{Kind: KindNewBlocker, Title: "Ingress extensions/v1beta1 & more", Targets: []string{"1.32", "1.33"},
			Teams: []string{"data", "pay<ments>"}},
		{Kind: KindNewBlocker, Title: "PodSecurityPolicy", Targets: []string{"1.33"}},
		{Kind: KindEOLApproaching, Title: "cert-manager 1.14 reaches end of life", Targets: []string{"1.33"}, Teams: []string{"platform"}},
	}, Omitted: map[string]int{KindNewBlocker: 3}}
	want := "[upgradescope] <https://fleet.example.com/a%7Cb&amp;c/clusters/7|prod>: 6 readiness changes\n" +
		"• new-blocker → 1.32, 1.33: Ingress extensions/v1beta1 &amp; more (teams data, pay&lt;ments&gt;)\n" +
		"• new-blocker → 1.33: PodSecurityPolicy (no owning team)\n" +
		"• eol-approaching → 1.33: cert-manager 1.14 reaches end of life (team platform)\n" +
		"• and 3 more new-blocker"
	if got := SlackText(many); got != want {
		t.Errorf("several changes:\n%s\nwant\n%s", got, want)
	}
	linked := &Body{Cluster: Cluster{Name: "prod", URL: "https://f.example/clusters/7?target=1.36"}, Changes: []Change{
		{Kind: KindNewBlocker, Title: "PSP <removed>", Targets: []string{"1.36"},
			URL: "https://f.example/clusters/7?target=1.36&finding=removed-api%2Fpolicy%2Fv1beta1%2FPodSecurityPolicy"},
		{Kind: KindBecameReady, Title: "ready for 1.37", Targets: []string{"1.37"}, URL: "https://f.example/clusters/7?target=1.37"},
	}}
	want = "[upgradescope] <https://f.example/clusters/7?target=1.36|prod>: 2 readiness changes\n" +
		"• new-blocker → 1.36: <https://f.example/clusters/7?target=1.36&amp;finding=removed-api%2Fpolicy%2Fv1beta1%2FPodSecurityPolicy|PSP &lt;removed&gt;> (no owning team)\n" +
		"• became-ready → 1.37: <https://f.example/clusters/7?target=1.37|ready for 1.37>"
	if got := SlackText(linked); got != want {
		t.Errorf("linked changes:\n%s\nwant\n%s", got, want)
	}
	linked.Changes = linked.Changes[:1]
	if got, want := SlackText(linked), "[upgradescope] <https://f.example/clusters/7?target=1.36|prod> → 1.36: new-blocker: "+
		"<https://f.example/clusters/7?target=1.36&amp;finding=removed-api%2Fpolicy%2Fv1beta1%2FPodSecurityPolicy|PSP &lt;removed&gt;> (no owning team)"; got != want {
		t.Errorf("one linked change:\n%s\nwant\n%s", got, want)
	}
}

func TestRetryAfterIsSecondsOrADateCappedAtAnHour(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0}, {"120", 2 * time.Minute}, {"0", 0}, {"-5", 0}, {"soon", 0}, {"99999999999999", MaxRetryAfter},
		{"Mon, 30 Nov 2026 12:05:00 GMT", 5 * time.Minute}, {"Mon, 30 Nov 2026 11:00:00 GMT", 0},
		{"Tue, 01 Dec 2026 12:00:00 GMT", MaxRetryAfter},
	} {
		if got := retryAfter(tc.header, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
