package notify

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// workerMetrics are the worker's counters (this replica's deliveries) and the queue depth,
// read from the store at scrape time so every replica reports the same.
type workerMetrics struct {
	total *prometheus.CounterVec
	queue *queueCollector
}

var descQueued = prometheus.NewDesc("upgradescope_notifications_queued",
	"Deliveries waiting in the outbox per sink (all replicas).", []string{"sink"}, nil)

func newWorkerMetrics(st store.Outbox, sinks []Sink) *workerMetrics {
	m := &workerMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_notifications_total",
			Help: "Notification deliveries finished on this replica by sink and result: delivered, failed (gave up after the last attempt), dropped (queued too long)."},
			[]string{"sink", "result"}),
		queue: &queueCollector{store: st},
	}
	for _, s := range sinks {
		for _, r := range []string{"delivered", "failed", "dropped"} {
			m.total.WithLabelValues(s.Name, r)
		}
		m.queue.sinks = append(m.queue.sinks, s.Name)
	}
	return m
}

func (m *workerMetrics) count(sink, result string, n int) {
	m.total.WithLabelValues(sink, result).Add(float64(n))
}

// Collectors are the worker's metrics, for the server's registry.
func (w *Worker) Collectors() []prometheus.Collector {
	return []prometheus.Collector{w.metrics.total, w.metrics.queue}
}

// queueCollector reports the outbox's depth per sink; a configured sink with nothing
// queued reports 0.
type queueCollector struct {
	store store.Outbox
	sinks []string
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descQueued }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.store.QueuedDeliveries(ctx)
	if err != nil {
		return // upgradescope_store_up says the store did not answer
	}
	for _, s := range c.sinks {
		if _, ok := counts[s]; !ok {
			counts[s] = 0
		}
	}
	for sink, n := range counts {
		ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(n), sink)
	}
}
