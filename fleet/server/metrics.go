package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// metrics are the server's /metrics: its own traffic, counted in this process, and the
// fleet's state, read from the store on every scrape so every replica reports the same.
type metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	ingest        *prometheus.CounterVec
	pruneFailures prometheus.Counter
	pruned        prometheus.Counter
	scrapeHandler http.Handler
}

// newMetrics registers the server's own series and more (the fleet's, the notification
// worker's, Config.Collectors).
func newMetrics(more ...prometheus.Collector) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "upgradescope_http_request_duration_seconds",
			Help: "HTTP request latency by route.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}, []string{"route"}),
		ingest: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_ingest_total",
			Help: "Pushes by result: accepted, duplicate, unauthorized, forbidden, conflict, invalid, too_large, busy, error."}, []string{"result"}),
		pruneFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "upgradescope_retention_prune_failures_total",
			Help: "Retention passes that failed."}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{Name: "upgradescope_retention_pruned_snapshots_total",
			Help: "Snapshots deleted by retention on this replica."}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.ingest, m.pruneFailures, m.pruned)
	m.registry.MustRegister(more...)
	m.scrapeHandler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) ingested(result string) { m.ingest.WithLabelValues(result).Inc() }

// refused counts a push refused for its credential.
func (m *metrics) refused(err error) { m.ingested(ingestResult(err)) }

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// instrument counts and times h under route.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// hostRefused counts a request the Host check refused.
func (m *metrics) hostRefused() { m.requests.WithLabelValues("host-refused", "421").Inc() }

// fleetCollector reports every cluster's stored evaluations at scrape time.
type fleetCollector struct {
	reads   *fleetReads
	pending func(fleetView) int
	now     func() time.Time
	// deadline bounds a scrape's store reads.
	deadline time.Duration
}

var (
	descScore = prometheus.NewDesc("upgradescope_cluster_score", "Stored readiness score per cluster and target.",
		[]string{"cluster", "target"}, nil)
	descVerdict = prometheus.NewDesc("upgradescope_cluster_verdict", "1 for the stored verdict of a cluster at a target, 0 for the others.",
		[]string{"cluster", "target", "verdict"}, nil)
	descBlockers = prometheus.NewDesc("upgradescope_cluster_blockers", "Blockers in the stored evaluation per cluster and target.",
		[]string{"cluster", "target"}, nil)
	descPushAge = prometheus.NewDesc("upgradescope_cluster_last_push_age_seconds", "Seconds since the cluster last pushed (duplicates count).",
		[]string{"cluster"}, nil)
	descStale = prometheus.NewDesc("upgradescope_cluster_stale", "1 when the cluster has not pushed for --stale-after.",
		[]string{"cluster"}, nil)
	descOutdated = prometheus.NewDesc("upgradescope_cluster_outdated", "1 when the stored evaluation is of an older snapshot or other bundles, or was made on an earlier UTC day.",
		[]string{"cluster", "target"}, nil)
	descPending = prometheus.NewDesc("upgradescope_reevaluation_pending",
		"Clusters whose latest snapshot awaits a re-evaluation with the server's current bundle set, or today's (UTC) after one made on an earlier day.", nil, nil)
	descUp             = prometheus.NewDesc("upgradescope_store_up", "1 when the store answered this scrape.", nil, nil)
	descBundleClusters = prometheus.NewDesc("upgradescope_bundle_clusters",
		"Clusters whose agent last said it evaluates with this revision of this bundle; behind is true when the server evaluates with another revision.",
		[]string{"bundle", "revision", "behind"}, nil)
)

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descScore, descVerdict, descBlockers, descPushAge, descStale, descOutdated, descUp,
		descBundleClusters, descPending} {
		ch <- d
	}
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
	defer cancel()
	v, err := c.reads.loadFleet(ctx, fleetScope)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	c.collectBundles(ch, v.clusters)
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(c.pending(v)))
	now := c.now()
	for _, cl := range v.clusters {
		ch <- prometheus.MustNewConstMetric(descPushAge, prometheus.GaugeValue, now.Sub(cl.LastSeen).Seconds(), cl.Name)
		ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, b2f(c.reads.stale(cl)), cl.Name)
		for _, cell := range v.cells[cl.ID] {
			if !applicable(cl, cell.Target) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(descOutdated, prometheus.GaugeValue, b2f(c.reads.summary(cl, cell).Outdated), cl.Name, cell.Target)
			ch <- prometheus.MustNewConstMetric(descScore, prometheus.GaugeValue, float64(cell.Score), cl.Name, cell.Target)
			ch <- prometheus.MustNewConstMetric(descBlockers, prometheus.GaugeValue, float64(cell.Blockers), cl.Name, cell.Target)
			for verdict := range verdictRank {
				ch <- prometheus.MustNewConstMetric(descVerdict, prometheus.GaugeValue, b2f(cell.Verdict == verdict), cl.Name, cell.Target, verdict)
			}
		}
	}
}

// collectBundles counts clusters per bundle revision their agents report.
func (c *fleetCollector) collectBundles(ch chan<- prometheus.Metric, clusters []store.Cluster) {
	counts := map[[3]string]int{}
	for _, cl := range clusters {
		once := map[[3]string]bool{} // a cluster counts once per revision, whatever its agent sent
		for _, b := range c.reads.agentBundles(cl) {
			key := [3]string{b.Name, b.Revision, strconv.FormatBool(b.Behind)}
			if !once[key] {
				once[key] = true
				counts[key]++
			}
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(descBundleClusters, prometheus.GaugeValue, float64(n), k[0], k[1], k[2])
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
