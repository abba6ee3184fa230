package policyset

import "github.com/prometheus/client_golang/prometheus"

// Metrics describe the active bundles and how polling for new ones goes; attached to a Set
// (Attach), they are its Monitor. The agent and the fleet server report the same series.
type Metrics struct {
	info      *prometheus.GaugeVec
	activated *prometheus.GaugeVec
	updates   *prometheus.CounterVec
	failing   prometheus.Gauge
}

// NewMetrics makes the series; register Collectors with the process's registry.
func NewMetrics() *Metrics {
	return &Metrics{
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_bundle_info",
			Help: "1 for each active policy bundle revision."}, []string{"name", "revision", "source"}),
		activated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "upgradescope_bundle_activated_timestamp_seconds",
			Help: "When the active revision of each bundle was activated (Unix time)."}, []string{"name"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_bundle_polls_total",
			Help: "Bundle polls by URL and result: activated, not_modified, download_failed, activation_failed, cache_failed."}, []string{"source", "result"}),
		failing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "upgradescope_bundle_update_failing",
			Help: "1 while the last bundle download or activation failed; the last good bundles stay active."}),
	}
}

// Collectors are the series to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.info, m.activated, m.updates, m.failing}
}

// Active implements Monitor.
func (m *Metrics) Active(revs []Revision) {
	m.info.Reset()
	m.activated.Reset()
	for _, b := range revs {
		m.info.WithLabelValues(b.Name, b.Revision, b.Source).Set(1)
		if !b.ActivatedAt.IsZero() {
			m.activated.WithLabelValues(b.Name).Set(float64(b.ActivatedAt.Unix()))
		}
	}
}

// Observed implements Monitor.
func (m *Metrics) Observed(src, result string, failing bool) {
	m.updates.WithLabelValues(src, result).Inc()
	m.failing.Set(b2f(failing))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
