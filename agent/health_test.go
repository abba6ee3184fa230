package agent

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	for _, m := range f.GetMetric() {
		match := true
		for _, l := range m.GetLabel() {
			if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
				match = false
			}
		}
		if match {
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue(), true
			}
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

func TestMetricsFollowTheLastSuccessfulTick(t *testing.T) {
	h := newHealth(10 * time.Minute)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	ok := Outcome{Duration: time.Second, Report: &report.Report{Targets: []report.TargetResult{{
		Target: "1.37", Verdict: "blocked", Score: 70,
		Findings: []report.Finding{{Severity: "blocker", Category: "eol-addon"}, {Severity: "info", Category: "addon-no-data"}},
	}}}, Capabilities: map[string]inventory.Capability{"helm": {Available: true, Partial: true}, "api-usage": {Available: true}}}
	h.record(ok, now)
	h.record(Outcome{Duration: time.Second, Err: errors.New("apiserver down")}, now.Add(time.Minute))

	fams := scrape(t, h.Handler())
	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"upgradescope_readiness_score", map[string]string{"target": "1.37"}, 70},
		{"upgradescope_readiness_verdict", map[string]string{"target": "1.37", "verdict": "blocked"}, 1},
		{"upgradescope_readiness_verdict", map[string]string{"target": "1.37", "verdict": "ready"}, 0},
		{"upgradescope_findings", map[string]string{"target": "1.37", "severity": "blocker", "category": "eol-addon"}, 1},
		{"upgradescope_capability_partial", map[string]string{"capability": "helm"}, 1},
		{"upgradescope_capability_available", map[string]string{"capability": "api-usage"}, 1},
		{"upgradescope_agent_tick_errors_total", nil, 1},
		{"upgradescope_agent_last_success_timestamp_seconds", nil, float64(now.Unix())},
		{"upgradescope_agent_interval_seconds", nil, 600},
	}
	for _, c := range checks {
		f, found := fams[c.family]
		if !found {
			t.Errorf("%s missing", c.family)
			continue
		}
		if got, ok := value(f, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
}

func TestReadyzNeedsARecentSuccessfulTick(t *testing.T) {
	h := newHealth(time.Minute)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	status := func() int {
		rec := httptest.NewRecorder()
		h.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if got := status(); got != http.StatusServiceUnavailable {
		t.Errorf("before any tick /readyz = %d, want 503", got)
	}
	h.record(Outcome{}, now)
	if got := status(); got != http.StatusOK {
		t.Errorf("after a successful tick /readyz = %d, want 200", got)
	}
	now = now.Add(2*time.Minute + 31*time.Second) // past 2 intervals + a half-interval budget
	if got := status(); got != http.StatusServiceUnavailable {
		t.Errorf("long after the last success /readyz = %d, want 503", got)
	}
}
