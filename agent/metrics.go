package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/policyset"
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
	bundles      *bundleMetrics
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
	m.bundles = newBundleMetrics(m.registry)
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

// bundleMetrics describe the active bundles and how polling for new ones goes.
type bundleMetrics struct {
	info      *prometheus.GaugeVec
	activated *prometheus.GaugeVec
	updates   *prometheus.CounterVec
	failing   prometheus.Gauge
}

func newBundleMetrics(r *prometheus.Registry) *bundleMetrics {
	m := &bundleMetrics{
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_bundle_info",
			Help: "1 for each active policy bundle revision."}, []string{"name", "revision", "source"}),
		activated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_bundle_activated_timestamp_seconds",
			Help: "When the active revision of each bundle was activated (Unix time)."}, []string{"name"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_bundle_polls_total",
			Help: "Bundle polls by URL and result: activated, not_modified, download_failed, activation_failed, cache_failed."}, []string{"source", "result"}),
		failing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "upgradescope_bundle_update_failing",
			Help: "1 while the last bundle download or activation failed; the last good bundles stay active."}),
	}
	r.MustRegister(m.info, m.activated, m.updates, m.failing)
	return m
}

// Active and Observed make bundleMetrics the agent's policyset.Monitor.
func (m *bundleMetrics) Active(revs []policyset.Revision) {
	m.info.Reset()
	m.activated.Reset()
	for _, b := range revs {
		m.info.WithLabelValues(b.Name, b.Revision, b.Source).Set(1)
		if !b.ActivatedAt.IsZero() {
			m.activated.WithLabelValues(b.Name).Set(float64(b.ActivatedAt.Unix()))
		}
	}
}

func (m *bundleMetrics) Observed(src, result string, failing bool) {
	m.updates.WithLabelValues(src, result).Inc()
	m.failing.Set(b2f(failing))
}
