package audit

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEachProviderSampleReadsThroughCollect reads each sample of testdata/providers as a user's
// export, framed by the reader: the flow exporter is named as the caller of the deprecated
// API with its service account, user agent and count, kubectl by its version, and the
// source names the sample's format.
func TestEachProviderSampleReadsThroughCollect(t *testing.T) {
	const agent = "flow-exporter/v0.9.2 (linux/amd64) kubernetes/4b1d2c3"
	for _, tc := range []struct {
		sample, format string
		callers        []string // verb and source range of each caller of flowschemas at v1beta3
		kubectlUser    string
	}{
		{"eks-filter-log-events.json", formatCloudWatch, []string{"list 10.0.12.0/24"}, "kubernetes-admin"},
		{"eks-get-log-events.json", formatCloudWatch, []string{"list 10.0.12.0/24"}, "kubernetes-admin"},
		{"eks-subscription.jsonl", formatCloudWatchSubscription, []string{"list 10.0.12.0/24"}, "kubernetes-admin"},
		{"eks-logs-insights.json", formatLogsInsights, []string{"list 10.0.12.0/24"}, "kubernetes-admin"},
		{"gke-logging-read.json", formatGKE, []string{"list 10.128.0.0/24", "patch 10.128.0.0/24"}, "jane@example.com"},
		{"gke-storage-sink.jsonl", formatGKE, []string{"list 10.128.0.0/24", "patch 10.128.0.0/24"}, "jane@example.com"},
		{"aks-storage.jsonl", formatAKSDiagnostics, []string{"list 10.224.0.0/24"}, "masterclient"},
		{"aks-event-hubs.json", formatAKSDiagnostics, []string{"patch 10.224.0.0/24"}, "masterclient"},
		{"aks-log-analytics.json", formatAKSLogAnalytics, []string{"patch 10.224.0.0/24"}, "masterclient"},
		{"aks-log-analytics-api.json", formatAKSLogAnalytics, []string{"list 10.224.0.0/24"}, "masterclient"},
		{"aks-azure-diagnostics.json", formatAKSAzureDiagnostics, []string{"patch 10.224.0.0/24"}, "masterclient"},
	} {
		t.Run(tc.sample, func(t *testing.T) {
			s, _ := collect(t, "", filepath.Join("testdata", "providers", tc.sample))
			if s.Malformed != 0 || len(s.Sources) != 1 || s.Sources[0].Format != tc.format {
				t.Fatalf("malformed %d %v, sources %+v; want none malformed, format %s", s.Malformed, s.MalformedAt, s.Sources, tc.format)
			}
			var got []string
			for _, c := range s.Callers {
				if c.Group != "flowcontrol.apiserver.k8s.io" || c.Version != "v1beta3" || c.Resource != "flowschemas" ||
					c.ServiceAccount != "monitoring/flow-exporter" || c.UserAgent != agent || c.RemovedRelease != "1.32" || c.Count != 1 {
					t.Errorf("caller %+v", c)
				}
				got = append(got, fmt.Sprintf("%s %v", c.Verb, c.SourceRanges[0]))
			}
			if !reflect.DeepEqual(got, tc.callers) {
				t.Errorf("callers %v, want %v", got, tc.callers)
			}
			if len(s.Kubectl) != 1 || s.Kubectl[0].Version != "v1.31.2" || !reflect.DeepEqual(s.Kubectl[0].Users, []string{tc.kubectlUser}) {
				t.Errorf("kubectl %+v, want v1.31.2 by %s", s.Kubectl, tc.kubectlUser)
			}
		})
	}
}

// TestAnUpgradeInsightIsMalformedSayingWhy: describe-insight output is recognised, and
// refused until the aggregation can add a user agent's count.
func TestAnUpgradeInsightIsMalformedSayingWhy(t *testing.T) {
	s, _ := collect(t, "", filepath.Join("testdata", "providers", "eks-describe-insight.json"))
	want := "testdata/providers/eks-describe-insight.json:1: " + formatEKSInsight + ": " + errInsightCounts.Error()
	if s.Events != 0 || !reflect.DeepEqual(s.MalformedAt, []string{want}) {
		t.Errorf("events %d, malformed %v; want none read and %q", s.Events, s.MalformedAt, want)
	}
}
