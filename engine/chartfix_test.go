package engine

import (
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/report"
)

// shopAdvice is the advice for release web/shop: 1.2.3 installed, blocked at 1.36.
func shopAdvice(targets []string, versions ...inventory.ChartVersionJudged) inventory.ChartAdvice {
	return inventory.ChartAdvice{
		Source: inventory.ChartSourceHelm, Namespace: "web", Name: "shop", Chart: "shop",
		Repository: "https://charts.example.com/stable", Installed: "1.2.3", Read: true, Targets: targets,
		Versions: append([]inventory.ChartVersionJudged{{
			Version: "1.2.3", AppVersion: "2.0", APIs: []string{"apps/v1 Deployment", "networking.k8s.io/v1beta1 Ingress"},
			Blocks: map[string][]string{"1.36": {"chart-incompat/helm-release/web/shop"}},
		}}, versions...),
	}
}

func blocked(targets ...string) map[string][]string {
	b := map[string][]string{}
	for _, t := range targets {
		b[t] = []string{"removed-api/helm-release/web/shop"}
	}
	return b
}

const kubeRemediation = "Upgrade the shop chart to a version whose kubeVersion admits 1.36 before upgrading the cluster."

func TestAChartFindingIsGivenTheVersionTheAdvisorFoundAndItsRemediationNamesIt(t *testing.T) {
	ingressV1 := []string{"apps/v1 Deployment", "networking.k8s.io/v1 Ingress"}
	tests := []struct {
		name            string
		key, target     string
		advice          inventory.ChartAdvice
		wantFix         *report.ChartFix
		wantRemediation string
	}{
		{
			name: "the lowest later version not blocked at the target, skipping one that failed and one blocked",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.3.0", Error: "render: template failed"},
				inventory.ChartVersionJudged{Version: "1.4.0", AppVersion: "2.1", Blocks: blocked("1.36")},
				inventory.ChartVersionJudged{Version: "1.5.0", AppVersion: "2.2", APIs: ingressV1},
				inventory.ChartVersionJudged{Version: "1.6.0", AppVersion: "2.3", APIs: ingressV1},
			),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", To: "1.5.0",
				FromAppVersion: "2.0", ToAppVersion: "2.2",
				APIsAdded: []string{"networking.k8s.io/v1 Ingress"}, APIsRemoved: []string{"networking.k8s.io/v1beta1 Ingress"},
				Status: "upgrade", Reason: "1.3.0 could not be judged: render: template failed",
			},
			wantRemediation: "Upgrade chart shop from 1.2.3 to 1.5.0 (appVersion 2.0 → 2.2); 1.3.0 could not be judged: render: template failed. " + kubeRemediation,
		},
		{
			name: "lower versions that could not be judged: the first is named with its error, the others counted",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.3.0", Error: "fetch chart shop 1.3.0: digest mismatch"},
				inventory.ChartVersionJudged{Version: "1.4.0", Error: "fetch chart shop 1.4.0: 404 Not Found"},
				inventory.ChartVersionJudged{Version: "1.4.1", Error: "fetch chart shop 1.4.1: 404 Not Found"},
				inventory.ChartVersionJudged{Version: "1.5.0", AppVersion: "2.2", APIs: ingressV1},
			),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", To: "1.5.0",
				FromAppVersion: "2.0", ToAppVersion: "2.2",
				APIsAdded: []string{"networking.k8s.io/v1 Ingress"}, APIsRemoved: []string{"networking.k8s.io/v1beta1 Ingress"},
				Status: "upgrade", Reason: "1.3.0 could not be judged: fetch chart shop 1.3.0: digest mismatch; 2 other lower versions could not either",
			},
			wantRemediation: "Upgrade chart shop from 1.2.3 to 1.5.0 (appVersion 2.0 → 2.2); 1.3.0 could not be judged: " +
				"fetch chart shop 1.3.0: digest mismatch; 2 other lower versions could not either. " + kubeRemediation,
		},
		{
			name: "an upgrade judged without values the collector could not read says so",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: func() inventory.ChartAdvice {
				a := shopAdvice([]string{"1.36"}, inventory.ChartVersionJudged{Version: "1.5.0", AppVersion: "2.2", APIs: ingressV1})
				a.Reason = "valuesFrom not read; valueFiles not read"
				a.ValuesNotRead = []string{"valuesFrom", "valueFiles"}
				return a
			}(),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", To: "1.5.0",
				FromAppVersion: "2.0", ToAppVersion: "2.2",
				APIsAdded: []string{"networking.k8s.io/v1 Ingress"}, APIsRemoved: []string{"networking.k8s.io/v1beta1 Ingress"},
				Status: "upgrade", Reason: "valuesFrom not read; valueFiles not read",
			},
			wantRemediation: "Upgrade chart shop from 1.2.3 to 1.5.0 (appVersion 2.0 → 2.2) (judged without: valuesFrom, valueFiles). " + kubeRemediation,
		},
		{
			name: "every hop of a plan: the lowest version no target blocks",
			key:  "removed-api/helm-release/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.35", "1.36"},
				inventory.ChartVersionJudged{Version: "1.5.0", AppVersion: "2.2", APIs: ingressV1, Blocks: blocked("1.35")},
				inventory.ChartVersionJudged{Version: "1.6.0", AppVersion: "2.3", APIs: ingressV1},
			),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", To: "1.5.0",
				FromAppVersion: "2.0", ToAppVersion: "2.2", EveryHop: "1.6.0",
				APIsAdded: []string{"networking.k8s.io/v1 Ingress"}, APIsRemoved: []string{"networking.k8s.io/v1beta1 Ingress"},
				Status: "upgrade",
			},
			wantRemediation: "Upgrade chart shop from 1.2.3 to 1.5.0 (appVersion 2.0 → 2.2). " + kubeRemediation,
		},
		{
			name: "no later version works and every one offered was judged: says so of the repository",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.3.0", Blocks: blocked("1.36")},
				inventory.ChartVersionJudged{Version: "1.4.0", Blocks: blocked("1.36")},
			),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", FromAppVersion: "2.0",
				Status: "none", Reason: "none of the 2 later versions judged supports 1.36",
				Judged: 2, Complete: true,
			},
			wantRemediation: "No version of chart shop in https://charts.example.com/stable at or above 1.2.3 supports 1.36. " + kubeRemediation,
		},
		{
			name: "no version judged works but some failed and more were not judged: claims only what was judged",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: func() inventory.ChartAdvice {
				a := shopAdvice([]string{"1.36"},
					inventory.ChartVersionJudged{Version: "1.3.0", Error: "fetch chart shop 1.3.0: digest mismatch"},
					inventory.ChartVersionJudged{Version: "1.3.1", Error: "render: template failed"},
					inventory.ChartVersionJudged{Version: "1.4.0", Blocks: blocked("1.36")},
				)
				a.VersionsOmitted = 7
				return a
			}(),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", FromAppVersion: "2.0",
				Status: "none", Reason: "1 was judged, 2 could not be fetched or rendered (1.3.0: fetch chart shop 1.3.0: digest mismatch; 1 other), 7 more were not judged",
				Judged: 1, Unjudged: 2, NotJudged: 7,
			},
			wantRemediation: "No version of chart shop judged supports 1.36: 1 was judged, 2 could not be fetched or rendered " +
				"(1.3.0: fetch chart shop 1.3.0: digest mismatch; 1 other), 7 more were not judged. " + kubeRemediation,
		},
		{
			name: "no version judged works but the search was cut short: says what cut it and which values were missing",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: func() inventory.ChartAdvice {
				a := shopAdvice([]string{"1.36"}, inventory.ChartVersionJudged{Version: "1.4.0", Blocks: blocked("1.36")})
				a.Reason = "valuesFrom not read; the advisor's deadline passed; no version read is free of blockers at every target"
				a.ValuesNotRead, a.Stopped = []string{"valuesFrom"}, "the advisor's deadline passed"
				return a
			}(),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3", FromAppVersion: "2.0",
				Status: "none", Reason: "1 was judged; the advisor's deadline passed; valuesFrom not read",
				Judged: 1,
			},
			wantRemediation: "No version of chart shop judged supports 1.36: 1 was judged; the advisor's deadline passed. " + kubeRemediation,
		},
		{
			name: "a repository not read: the fix says why and the remediation stays",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: func() inventory.ChartAdvice {
				a := shopAdvice(nil)
				a.Read, a.Reason, a.Versions = false, "read https://charts.example.com/stable: 401 Unauthorized", nil
				return a
			}(),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3",
				Status: "unread", Reason: "read https://charts.example.com/stable: 401 Unauthorized",
			},
			wantRemediation: kubeRemediation,
		},
		{
			name: "a declared version that could not be fetched: the unread fix carries its error",
			key:  "chart-incompat/helm-release/web/shop", target: "1.36",
			advice: func() inventory.ChartAdvice {
				a := shopAdvice(nil)
				a.Read, a.Reason = false, "the declared version could not be judged, so no other version was"
				a.Stopped = a.Reason
				a.Versions = []inventory.ChartVersionJudged{{Version: "1.2.3", Error: "fetch chart shop 1.2.3: 401 Unauthorized"}}
				return a
			}(),
			wantFix: &report.ChartFix{
				Chart: "shop", Repository: "https://charts.example.com/stable", From: "1.2.3",
				Status: "unread", Reason: "the declared version could not be judged, so no other version was; fetch chart shop 1.2.3: 401 Unauthorized",
			},
			wantRemediation: kubeRemediation,
		},
		{
			name: "a target the advisor did not judge gets no fix",
			key:  "chart-incompat/helm-release/web/shop", target: "1.37",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.5.0", APIs: ingressV1},
			),
			wantRemediation: kubeRemediation,
		},
		{
			name: "a finding of another category about the release gets no fix",
			key:  "unknown-api/helm-release/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.5.0", APIs: ingressV1},
			),
			wantRemediation: kubeRemediation,
		},
		{
			name: "a GitOps chart's finding reads the advice of its source only",
			key:  "chart-incompat/argocd/web/shop", target: "1.36",
			advice: shopAdvice([]string{"1.36"},
				inventory.ChartVersionJudged{Version: "1.5.0", APIs: ingressV1},
			),
			wantRemediation: kubeRemediation,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := report.Finding{Key: tt.key, Target: tt.target, Remediation: kubeRemediation}
			targets := []report.TargetResult{{Target: tt.target, Suppressed: []report.Finding{f}}}
			attachChartFixes(targets, &inventory.Document{ChartAdvice: []inventory.ChartAdvice{tt.advice}}, kb.Observe{})
			got := targets[0].Suppressed[0]
			if !reflect.DeepEqual(got.Fix, tt.wantFix) {
				t.Errorf("fix:\n got %+v\nwant %+v", got.Fix, tt.wantFix)
			}
			if got.Remediation != tt.wantRemediation {
				t.Errorf("remediation:\n got %q\nwant %q", got.Remediation, tt.wantRemediation)
			}
		})
	}
}

func TestAGitOpsChartFindingReadsTheAdviceOfItsApplication(t *testing.T) {
	a := shopAdvice([]string{"1.36"}, inventory.ChartVersionJudged{Version: "1.5.0", AppVersion: "2.2"})
	a.Source = inventory.ChartSourceArgoCD
	targets := []report.TargetResult{{Target: "1.36", Findings: []report.Finding{
		{Key: "chart-incompat/argocd/web/shop", Target: "1.36"},
		{Key: "chart-incompat/flux/web/shop", Target: "1.36"},
	}}}
	attachChartFixes(targets, &inventory.Document{ChartAdvice: []inventory.ChartAdvice{a}}, kb.Observe{})
	if fix := targets[0].Findings[0].Fix; fix == nil || fix.To != "1.5.0" {
		t.Errorf("the Application's finding: fix %+v, want an upgrade to 1.5.0", fix)
	}
	if fix := targets[0].Findings[1].Fix; fix != nil {
		t.Errorf("a Flux finding of the same name took the Argo CD advice: %+v", fix)
	}
	if got, want := targets[0].Findings[0].Remediation, "Upgrade chart shop from 1.2.3 to 1.5.0 (appVersion 2.0 → 2.2)."; got != want {
		t.Errorf("remediation %q, want %q", got, want)
	}
}
