package advisor_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
	"github.com/upgradescope/upgradescope/inventory"
)

var now = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

var testEngine = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.WithToolVersion("test"))
})

func loadEngine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := testEngine()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func tpl(apiVersion, kind string) map[string]string {
	return map[string]string{"obj.yaml": "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: {{ .Release.Name }}\n"}
}

var (
	ingressV1beta1 = tpl("networking.k8s.io/v1beta1", "Ingress")
	ingressV1      = tpl("networking.k8s.io/v1", "Ingress")
	ipV1beta1      = tpl("networking.k8s.io/v1beta1", "IPAddress")
	configMap      = tpl("v1", "ConfigMap")
)

// webIngress reproduces ingress-nginx's history (renamed: the add-on registry knows
// ingress-nginx and judges its retirement): 3.x on networking.k8s.io/v1beta1, 4.0.0 moving
// to v1 with kubeVersion >=1.19.
var webIngress = []charttest.Chart{
	{Name: "web-ingress", Version: "3.0.0", AppVersion: "0.44.0", KubeVersion: ">=1.16.0-0", Templates: ingressV1beta1},
	{Name: "web-ingress", Version: "3.1.0", AppVersion: "0.45.0", KubeVersion: ">=1.16.0-0 <1.22.0-0", Templates: ingressV1beta1},
	{Name: "web-ingress", Version: "3.2.0", AppVersion: "0.46.0", KubeVersion: ">=1.16.0-0", Templates: ingressV1beta1},
	{Name: "web-ingress", Version: "4.0.0", AppVersion: "1.0.0", KubeVersion: ">=1.19.0-0", Templates: ingressV1},
	{Name: "web-ingress", Version: "4.1.0-rc.1", AppVersion: "1.1.0-rc.1", KubeVersion: ">=1.19.0-0", Templates: ingressV1},
	{Name: "web-ingress", Version: "4.1.0", AppVersion: "1.1.0", KubeVersion: "<1.36.0-0", Templates: ingressV1},
}

var prerelease = []charttest.Chart{
	{Name: "pre", Version: "1.0.0-rc.1", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "pre", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "pre", Version: "1.1.0-rc.1", KubeVersion: ">=1.20.0-0", Templates: configMap},
	{Name: "pre", Version: "1.1.0", KubeVersion: ">=1.20.0-0", Templates: configMap},
}

var stale = []charttest.Chart{
	{Name: "stale", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "stale", Version: "1.1.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "stale", Version: "1.2.0", Templates: ingressV1beta1},
}

var hop = []charttest.Chart{
	{Name: "hop", Version: "1.0.0", KubeVersion: "<1.35.0-0", Templates: configMap},
	{Name: "hop", Version: "1.1.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "hop", Version: "1.1.5", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "hop", Version: "1.2.0", KubeVersion: ">=1.20.0-0", Templates: ipV1beta1},
	{Name: "hop", Version: "1.3.0", KubeVersion: ">=1.20.0-0", Templates: configMap},
}

// eachHop has a version free at each target alone before the one free at both.
var eachHop = []charttest.Chart{
	{Name: "eh", Version: "1.0.0", KubeVersion: "<1.35.0-0", Templates: configMap},
	{Name: "eh", Version: "1.1.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "eh", Version: "1.2.0", KubeVersion: ">=1.36.0-0", Templates: configMap},
	{Name: "eh", Version: "1.3.0", KubeVersion: ">=1.20.0-0", Templates: configMap},
}

// early renders an API its target 1.29 does not serve yet (ValidatingAdmissionPolicy v1 is
// served from 1.30) before a version that renders none.
var early = []charttest.Chart{
	{Name: "early", Version: "1.0.0", KubeVersion: "<1.29.0-0", Templates: configMap},
	{Name: "early", Version: "2.0.0", Templates: tpl("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")},
	{Name: "early", Version: "2.1.0", Templates: configMap},
}

var broken = []charttest.Chart{
	{Name: "broken", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "broken", Version: "1.1.0", Templates: map[string]string{"t.yaml": `{{ fail "image.repository must be set" }}`}},
	{Name: "broken", Version: "1.2.0", Templates: configMap},
}

var legacy = []charttest.Chart{
	{Name: "legacy", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "legacy", Version: "2.0.0", Values: map[string]any{"legacy": false}, Templates: map[string]string{"i.yaml": `{{- if .Values.legacy }}
apiVersion: networking.k8s.io/v1beta1
{{- else }}
apiVersion: networking.k8s.io/v1
{{- end }}
kind: Ingress
metadata:
  name: x
`}},
	{Name: "legacy", Version: "2.1.0", Templates: ingressV1},
}

// capable picks the Ingress API by asking the version set, as many charts do.
var capable = []charttest.Chart{
	{Name: "capable", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "capable", Version: "1.1.0", Templates: map[string]string{"i.yaml": `{{- if .Capabilities.APIVersions.Has "networking.k8s.io/v1beta1/Ingress" }}
apiVersion: networking.k8s.io/v1beta1
{{- else }}
apiVersion: networking.k8s.io/v1
{{- end }}
kind: Ingress
metadata:
  name: x
`}},
}

// switching picks the IPAddress API by asking the version set, so it renders v1beta1 where
// the target still serves it (1.36) and v1 where it is gone (1.37): each target is judged on
// its own render, never on the union.
var switching = []charttest.Chart{
	{Name: "switching", Version: "1.0.0", KubeVersion: "<1.36.0-0", Templates: configMap},
	{Name: "switching", Version: "1.1.0", Templates: map[string]string{"ip.yaml": `{{- if .Capabilities.APIVersions.Has "networking.k8s.io/v1beta1/IPAddress" }}
apiVersion: networking.k8s.io/v1beta1
{{- else }}
apiVersion: networking.k8s.io/v1
{{- end }}
kind: IPAddress
metadata:
  name: x
`}},
}

// helmSubject is a release of c as the cluster collector reads it.
func helmSubject(ns, name string, c charttest.Chart, apis ...string) advisor.Subject {
	return advisor.Subject{Source: inventory.ChartSourceHelm, Namespace: ns, Name: name, Chart: c.Name, Version: c.Version,
		AppVersion: c.AppVersion, KubeVersion: c.KubeVersion, InstalledAPIs: apis}
}

type judged struct {
	version string
	blocks  map[string][]string
	err     bool
}

func summary(a inventory.ChartAdvice) []judged {
	var out []judged
	for _, v := range a.Versions {
		out = append(out, judged{v.Version, v.Blocks, v.Error != ""})
	}
	return out
}

func advise(t *testing.T, r advisor.Repository, targets []string, subjects ...advisor.Subject) []inventory.ChartAdvice {
	t.Helper()
	return advisor.Advise(context.Background(), subjects, advisor.Options{
		Targets: targets, Engine: loadEngine(t), Now: now, Repository: r,
	})
}

func kubeVersionKey(ns, name string) string { return "chart-incompat/helm-release/" + ns + "/" + name }
func removedKey(ns, name string) string     { return "removed-api/helm-release/" + ns + "/" + name }

// The API rules' keys, raised on what a version renders, judged as manifests.
const (
	ingressV1beta1Key = "removed-api/networking.k8s.io/v1beta1/Ingress"
	ipV1beta1Key      = "removed-api/networking.k8s.io/v1beta1/IPAddress"
)

func TestTheAdvisorNamesTheLowestVersionFreeAtTheTarget(t *testing.T) {
	at136 := []string{"1.36"}
	tests := []struct {
		name    string
		targets []string
		subject advisor.Subject
		want    []judged
		reason  string
	}{
		{
			name:    "a version kubeVersion admits but that renders a removed API is judged and passed over; one kubeVersion excludes is not fetched",
			targets: at136, subject: helmSubject("edge", "ingress", webIngress[0], "networking.k8s.io/v1beta1 Ingress"),
			want: []judged{
				{"3.0.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
				{"3.2.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
				{"4.0.0", nil, false},
			},
		},
		{
			name:    "a pre-release is not named when the installed version is a release",
			targets: at136, subject: helmSubject("apps", "pre", prerelease[1], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "pre")}}, false},
				{"1.1.0", nil, false},
			},
		},
		{
			name:    "a pre-release is named when the installed version is one",
			targets: at136, subject: helmSubject("apps", "pre", prerelease[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0-rc.1", map[string][]string{"1.36": {kubeVersionKey("apps", "pre")}}, false},
				{"1.1.0-rc.1", nil, false},
			},
		},
		{
			name:    "no version works and the advice says so",
			targets: at136, subject: helmSubject("apps", "stale", stale[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "stale")}}, false},
				{"1.2.0", map[string][]string{"1.36": {removedKey("apps", "stale"), ingressV1beta1Key}}, false},
			},
			reason: "no version read is free of blockers at every target",
		},
		{
			name:    "every hop: the versions on the way name the lowest for each target",
			targets: []string{"1.35", "1.36", "1.37"}, subject: helmSubject("apps", "hop", hop[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.35": {kubeVersionKey("apps", "hop")}, "1.36": {kubeVersionKey("apps", "hop")}, "1.37": {kubeVersionKey("apps", "hop")}}, false},
				{"1.1.0", map[string][]string{"1.36": {kubeVersionKey("apps", "hop")}, "1.37": {kubeVersionKey("apps", "hop")}}, false},
				{"1.2.0", map[string][]string{"1.37": {removedKey("apps", "hop"), ipV1beta1Key}}, false},
				{"1.3.0", nil, false},
			},
		},
		{
			name:    "every hop: once each target has its own lowest version, the search goes on to the first free at both",
			targets: []string{"1.35", "1.36"}, subject: helmSubject("apps", "eh", eachHop[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.35": {kubeVersionKey("apps", "eh")}, "1.36": {kubeVersionKey("apps", "eh")}}, false},
				{"1.1.0", map[string][]string{"1.36": {kubeVersionKey("apps", "eh")}}, false},
				{"1.2.0", map[string][]string{"1.35": {kubeVersionKey("apps", "eh")}}, false},
				{"1.3.0", nil, false},
			},
		},
		{
			name:    "a version rendering an API the target does not serve yet is blocked by the rules that judge manifests",
			targets: []string{"1.29"}, subject: helmSubject("apps", "early", early[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.29": {kubeVersionKey("apps", "early")}}, false},
				{"2.0.0", map[string][]string{"1.29": {"removed-api/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy/unserved"}}, false},
				{"2.1.0", nil, false},
			},
		},
		{
			name:    "a chart asking the version set renders the API the target serves, never one it removed",
			targets: at136, subject: helmSubject("apps", "capable", capable[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "capable")}}, false},
				{"1.1.0", nil, false},
			},
		},
		{
			name:    "a chart choosing its API by the target's capabilities is judged at each target on what it renders there",
			targets: []string{"1.36", "1.37"}, subject: helmSubject("apps", "switching", switching[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "switching")}, "1.37": {kubeVersionKey("apps", "switching")}}, false},
				{"1.1.0", nil, false},
			},
		},
		{
			name:    "a version that does not render is named with its error and the search goes on",
			targets: at136, subject: helmSubject("apps", "broken", broken[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "broken")}}, false},
				{"1.1.0", nil, true},
				{"1.2.0", nil, false},
			},
		},
		{
			name:    "the release's values decide what a version renders",
			targets: at136, subject: withValues(helmSubject("apps", "legacy", legacy[0], "v1 ConfigMap"), map[string]any{"legacy": true}),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "legacy")}}, false},
				{"2.0.0", map[string][]string{"1.36": {removedKey("apps", "legacy"), ingressV1beta1Key}}, false},
				{"2.1.0", nil, false},
			},
		},
		{
			name:    "the chart's defaults apply where the release sets nothing",
			targets: at136, subject: helmSubject("apps", "legacy", legacy[0], "v1 ConfigMap"),
			want: []judged{
				{"1.0.0", map[string][]string{"1.36": {kubeVersionKey("apps", "legacy")}}, false},
				{"2.0.0", nil, false},
			},
		},
	}
	repo := newMemRepo(append(append(append(append(append(webIngress, prerelease...), stale...), hop...), broken...), append(append(append(legacy, capable...), switching...), append(eachHop, early...)...)...)...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advise(t, repo, tt.targets, tt.subject)
			if len(got) != 1 {
				t.Fatalf("got %d entries, want 1: %+v", len(got), got)
			}
			if s := summary(got[0]); !reflect.DeepEqual(s, tt.want) {
				t.Fatalf("versions judged:\n got %+v\nwant %+v", s, tt.want)
			}
			if !got[0].Read || got[0].Reason != tt.reason {
				t.Fatalf("read %v, reason %q; want read, reason %q", got[0].Read, got[0].Reason, tt.reason)
			}
			if got[0].Repository != "https://charts.example.test/stable" || got[0].Installed != tt.subject.Version {
				t.Fatalf("repository %q, installed %q", got[0].Repository, got[0].Installed)
			}
		})
	}
}

func withValues(s advisor.Subject, v map[string]any) advisor.Subject { s.Values = v; return s }

func TestAReleaseNoTargetBlocksGetsNoAdviceAndNoRead(t *testing.T) {
	repo := newMemRepo(webIngress...)
	got := advise(t, repo, []string{"1.36"}, helmSubject("edge", "ingress", webIngress[3], "networking.k8s.io/v1 Ingress"))
	if len(got) != 0 {
		t.Fatalf("advice for a release no target blocks: %+v", got)
	}
	if n := repo.reads.Load(); n != 0 {
		t.Fatalf("the repository was read %d times", n)
	}
}

func TestAGitOpsChartIsJudgedAtItsDeclaredVersion(t *testing.T) {
	repo := newMemRepo(webIngress...)
	gitops := func(version string) advisor.Subject {
		return advisor.Subject{Source: inventory.ChartSourceArgoCD, Namespace: "argocd", Name: "edge", Chart: "web-ingress",
			Version: version, Repository: "https://charts.example.test/stable", ValuesNotRead: []string{"valuesFrom"}}
	}
	got := advise(t, repo, []string{"1.36"}, gitops("4.0.0"), withName(gitops("3.0.0"), "old-edge"))
	if len(got) != 2 {
		t.Fatalf("got %d entries, want 2", len(got))
	}
	fine, old := got[0], got[1]
	if fine.Name != "edge" || !reflect.DeepEqual(summary(fine), []judged{{"4.0.0", nil, false}}) || fine.Versions[0].KubeVersion != ">=1.19.0-0" {
		t.Fatalf("declared 4.0.0: %+v", fine)
	}
	if fine.Reason != "valuesFrom not read" {
		t.Fatalf("reason %q does not carry the values note", fine.Reason)
	}
	want := []judged{
		{"3.0.0", map[string][]string{"1.36": {removedKey("argocd", "old-edge"), ingressV1beta1Key}}, false},
		{"3.2.0", map[string][]string{"1.36": {removedKey("argocd", "old-edge"), ingressV1beta1Key}}, false},
		{"4.0.0", nil, false},
	}
	if !reflect.DeepEqual(summary(old), want) {
		t.Fatalf("declared 3.0.0:\n got %+v\nwant %+v", summary(old), want)
	}
}

func withName(s advisor.Subject, name string) advisor.Subject { s.Name = name; return s }

func TestARepositoryThatCannotBeReadIsSaidSoWithoutItsCredentials(t *testing.T) {
	repo := newMemRepo(stale...)
	repo.fail = errors.New(`get "https://bot:s3cret@charts.example.test/stable/index.yaml?token=abc": connection refused`)
	repo.url = "https://bot:s3cret@charts.example.test/stable?token=abc"
	s := helmSubject("apps", "stale", stale[0], "v1 ConfigMap")
	s.Repository = repo.url
	got := advise(t, repo, []string{"1.36"}, s)
	if len(got) != 1 || got[0].Read {
		t.Fatalf("got %+v, want one unread entry", got)
	}
	if len(got[0].Versions) != 1 || got[0].Versions[0].Blocks["1.36"] == nil {
		t.Fatalf("versions %+v, want the installed one judged", got[0].Versions)
	}
	for _, secret := range []string{"s3cret", "token=abc", "bot:"} {
		if strings.Contains(got[0].Reason, secret) || strings.Contains(got[0].Repository, secret) {
			t.Fatalf("reason %q or repository %q shows %q", got[0].Reason, got[0].Repository, secret)
		}
	}
	if got[0].Repository != "https://charts.example.test/stable" {
		t.Fatalf("repository %q", got[0].Repository)
	}
}

func TestTheBoundCountsTheVersionsNotJudged(t *testing.T) {
	repo := newMemRepo(broken...)
	got := advisor.Advise(context.Background(), []advisor.Subject{helmSubject("apps", "broken", broken[0], "v1 ConfigMap")},
		advisor.Options{Targets: []string{"1.36"}, Engine: loadEngine(t), Now: now, Repository: repo, MaxVersions: 1})
	if len(got) != 1 || len(got[0].Versions) != 2 || got[0].VersionsOmitted != 1 {
		t.Fatalf("got %+v, want 1.0.0 and 1.1.0 judged and one omitted", got)
	}
}

func TestAdviceIsSortedAndRepeatable(t *testing.T) {
	repo := newMemRepo(append(append([]charttest.Chart{}, stale...), hop...)...)
	subjects := []advisor.Subject{
		helmSubject("b", "stale", stale[0], "v1 ConfigMap"),
		helmSubject("a", "hop", hop[0], "v1 ConfigMap"),
		helmSubject("a", "stale", stale[0], "v1 ConfigMap"),
	}
	first := advise(t, repo, []string{"1.36"}, subjects...)
	var order []string
	for _, a := range first {
		order = append(order, a.Namespace+"/"+a.Name)
	}
	if want := []string{"a/hop", "a/stale", "b/stale"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if again := advise(t, repo, []string{"1.36"}, subjects[2], subjects[0], subjects[1]); !reflect.DeepEqual(first, again) {
		t.Fatal("the same subjects in another order gave other advice")
	}
}

// asking renders the first of apis (as "apiVersion Kind") the version set has, else a
// ConfigMap, as charts choosing an API by .Capabilities do.
func asking(name string, apis ...string) []charttest.Chart {
	var b strings.Builder
	for i, api := range apis {
		apiVersion, kind, _ := strings.Cut(api, " ")
		if i > 0 {
			b.WriteString("{{- else ")
		} else {
			b.WriteString("{{- ")
		}
		b.WriteString("if .Capabilities.APIVersions.Has \"" + apiVersion + "/" + kind + "\" }}\napiVersion: " + apiVersion + "\nkind: " + kind + "\n")
	}
	b.WriteString("{{- else }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\nmetadata:\n  name: x\n")
	return []charttest.Chart{
		{Name: name, Version: "1.0.0", KubeVersion: "<1.20.0-0", Templates: configMap},
		{Name: name, Version: "2.0.0", Templates: map[string]string{"obj.yaml": b.String()}},
	}
}

func TestTemplatesSeeOnlyWhatTheTargetServesByDefault(t *testing.T) {
	tests := []struct {
		name   string
		target string
		charts []charttest.Chart
		want   []string
	}{
		{
			name:   "a beta introduced since 1.24 is off by default: at 1.29 neither ValidatingAdmissionPolicy v1 (1.30) nor v1beta1 is served",
			target: "1.29", charts: asking("vap", "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy"),
			want: []string{"v1 ConfigMap"},
		},
		{
			name:   "at 1.30 ValidatingAdmissionPolicy v1 is served",
			target: "1.30", charts: asking("vap30", "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy"),
			want: []string{"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy"},
		},
		{
			name:   "an alpha is never served",
			target: "1.33", charts: asking("alpha", "storage.k8s.io/v1alpha1 VolumeAttributesClass", "rbac.authorization.k8s.io/v1alpha1 Role"),
			want: []string{"v1 ConfigMap"},
		},
		{
			name:   "a beta older than 1.24 that the target still serves is served",
			target: "1.24", charts: asking("old-beta", "flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema"),
			want: []string{"flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema"},
		},
		{
			name:   "flowcontrol v1beta3 is on by default, an exception to the rule",
			target: "1.29", charts: asking("flow", "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"),
			want: []string{"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advise(t, newMemRepo(tt.charts...), []string{tt.target}, helmSubject("apps", tt.charts[0].Name, tt.charts[0], "v1 ConfigMap"))
			if len(got) != 1 || len(got[0].Versions) != 2 {
				t.Fatalf("got %+v, want 1.0.0 and 2.0.0 judged", got)
			}
			if v := got[0].Versions[1]; !reflect.DeepEqual(v.APIs, tt.want) {
				t.Fatalf("2.0.0 renders %v at %s, want %v", v.APIs, tt.target, tt.want)
			}
		})
	}
}

func TestABlockerNoChartVersionCanClearBlocksNone(t *testing.T) {
	var ingressNginx []charttest.Chart
	for _, c := range webIngress {
		c.Name = "ingress-nginx"
		ingressNginx = append(ingressNginx, c)
	}
	repo := newMemRepo(ingressNginx...)
	tests := []struct {
		name    string
		subject advisor.Subject
		want    []judged
	}{
		{
			name:    "ingress-nginx's retirement blocks every version alike, so 4.0.0 is named for the removed API",
			subject: helmSubject("edge", "ingress", ingressNginx[0], "networking.k8s.io/v1beta1 Ingress"),
			want: []judged{
				{"3.0.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
				{"3.2.0", map[string][]string{"1.36": {removedKey("edge", "ingress"), ingressV1beta1Key}}, false},
				{"4.0.0", nil, false},
			},
		},
		{
			name:    "a release only the retirement blocks gets no advice",
			subject: helmSubject("edge", "ingress", ingressNginx[3], "networking.k8s.io/v1 Ingress"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advise(t, repo, []string{"1.36"}, tt.subject)
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("advice %+v, want none", summary(got[0]))
				}
				return
			}
			if len(got) != 1 || !reflect.DeepEqual(summary(got[0]), tt.want) || got[0].Reason != "" {
				t.Fatalf("got %+v, want\n%+v", got, tt.want)
			}
		})
	}
}
