package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/bundles/policyset"
)

// metrics are the agent's /metrics: the last successful tick's judgement, and tick health.
type metrics struct {
	registry     *prometheus.Registry
	tickDuration prometheus.Histogram
	tickErrors   prometheus.Counter
	lastSuccess  prometheus.Gauge
	interval     prometheus.Gauge
	score        *prometheus.GaugeVec
	verdict      *prometheus.GaugeVec
	findings     *prometheus.GaugeVec
	capAvailable *prometheus.GaugeVec
	capPartial   *prometheus.GaugeVec
	bundles      *policyset.Metrics
}

var verdicts = []string{"ready", "blocked", "unknown"}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		tickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "upgradescope_agent_tick_duration_seconds", Help: "How long a tick took.",
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 12),
		}),
		tickErrors:  prometheus.NewCounter(prometheus.CounterOpts{Name: "upgradescope_agent_tick_errors_total", Help: "Ticks that failed."}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "upgradescope_agent_last_success_timestamp_seconds", Help: "When a tick last succeeded (Unix time)."}),
		interval:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "upgradescope_agent_interval_seconds", Help: "The tick interval."}),
		score:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_readiness_score", Help: "Readiness score per target (0-100)."}, []string{"target"}),
		verdict: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_readiness_verdict",
			Help: "1 for the target's current verdict, 0 for the others."}, []string{"target", "verdict"}),
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_findings",
			Help: "Findings per target, severity and category (suppressed ones excluded)."}, []string{"target", "severity", "category"}),
		capAvailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_capability_available", Help: "1 when the collector step could run."}, []string{"capability"}),
		capPartial:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_capability_partial", Help: "1 when the collector step saw only part of what it looked for."}, []string{"capability"}),
	}
	m.registry.MustRegister(m.tickDuration, m.tickErrors, m.lastSuccess, m.interval, m.score, m.verdict, m.findings, m.capAvailable, m.capPartial)
	m.bundles = policyset.NewMetrics()
	m.registry.MustRegister(m.bundles.Collectors()...)
	return m
}

// record updates tick health always, and the judgement only from a successful tick.
func (m *metrics) record(out Outcome, unix float64) {
	m.tickDuration.Observe(out.Duration.Seconds())
	if out.Err != nil {
		m.tickErrors.Inc()
		return
	}
	m.lastSuccess.Set(unix)
	m.score.Reset()
	m.verdict.Reset()
	m.findings.Reset()
	if out.Report != nil {
		for _, t := range out.Report.Targets {
			m.score.WithLabelValues(t.Target).Set(float64(t.Score))
			for _, v := range verdicts {
				m.verdict.WithLabelValues(t.Target, v).Set(b2f(v == t.Verdict))
			}
			for _, f := range t.Findings {
				m.findings.WithLabelValues(t.Target, f.Severity, f.Category).Inc()
			}
		}
	}
	m.capAvailable.Reset()
	m.capPartial.Reset()
	for name, c := range out.Capabilities {
		m.capAvailable.WithLabelValues(name).Set(b2f(c.Available))
		m.capPartial.WithLabelValues(name).Set(b2f(c.Partial))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
