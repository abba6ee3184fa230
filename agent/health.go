package agent

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health answers /healthz and /readyz: ready once a tick succeeded within twice the interval
// plus a tick's own budget.
type Health struct {
	metrics     *metrics
	mu          sync.Mutex
	interval    time.Duration
	lastSuccess time.Time
	now         func() time.Time
}

func newHealth(interval time.Duration) *Health {
	m := newMetrics()
	m.interval.Set(interval.Seconds())
	return &Health{interval: interval, now: time.Now, metrics: m}
}

func (h *Health) record(out Outcome, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.metrics.record(out, float64(at.Unix()))
	if out.Err == nil {
		h.lastSuccess = at
	}
}

// Ready says whether a tick succeeded recently.
func (h *Health) Ready() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	budget := min(h.interval/2, 5*time.Minute)
	return !h.lastSuccess.IsZero() && h.now().Sub(h.lastSuccess) <= 2*h.interval+budget
}

// Handler serves /healthz, /readyz and /metrics.
func (h *Health) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.Ready() {
			http.Error(w, "no tick succeeded recently", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(h.metrics.registry, promhttp.HandlerOpts{}))
	return mux
}
