package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// The API server's audit webhook backend posts batches of audit events (an
// audit.k8s.io/v1 EventList) to POST /api/v1/audit/{name}, {name} the cluster's name as
// it pushes: a static kubeconfig cannot know the id the server gives the cluster. The batch
// is counted into the cluster's stored section (collectors/audit aggregates it, the store
// keeps it under a row lock), and a batch that names a caller or an API not seen before
// has the cluster's latest snapshot judged again (auditRefresh). The webhook backend retries
// a batch the server answers 5xx or 429 to, and drops one it answers 4xx to: only a body
// that is not an EventList is refused as such (400), a malformed event is counted in the
// section and skipped. No event's content is ever logged.

// DefaultMaxAuditBatchBytes bounds one batch. The API server sends at most 400 events a
// batch (--audit-webhook-batch-max-size); under docs/audit-policy.yaml (Metadata level) an
// event is 0.9 KB (median) to 1.15 KB (largest) on the test API server (4,223 events), so
// a full batch is under 500 KB. 4 MiB leaves room for events eight times larger: a service
// account's extra user info, long user agents, or a policy that also logs other requests.
const DefaultMaxAuditBatchBytes = 4 << 20

// auditSource is the source a batch is counted as in the section.
const auditSource = "webhook"

// auditTimeout bounds counting and storing one batch once its body is read.
const auditTimeout = 30 * time.Second

// auditHandler is POST /api/v1/audit/{name}, below the ingest credential middleware.
type auditHandler struct {
	store   store.Store
	admit   *admission.Turns
	refresh *auditRefresh
	metrics *auditMetrics
	log     *slog.Logger
	// work is the context of what outlives a request: a batch read whole is counted even
	// when the API server hangs up.
	work        context.Context
	maxBytes    int
	bodyTimeout time.Duration
}

func (h *auditHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res, err := h.accept(w, r)
	if err != nil {
		h.metrics.batch(auditResult(err))
		answer(h.log, w, r, err)
		return
	}
	h.metrics.batch("accepted")
	h.metrics.events(res.Events, res.Malformed)
	writeJSON(w, http.StatusOK, res)
}

// accept checks, cheapest first, the name against the credential, the headers, then reads
// the body within its bounds and counts it into the cluster's section.
func (h *auditHandler) accept(w http.ResponseWriter, r *http.Request) (api.AuditAccepted, error) {
	who, ok := pusherOf(r)
	if !ok {
		return api.AuditAccepted{}, errNoIngestCredential
	}
	name := r.PathValue("name")
	if err := push.CheckClusterName(name); err != nil {
		return api.AuditAccepted{}, fail(http.StatusBadRequest, err.Error())
	}
	if who.cluster != "" && who.cluster != name {
		return api.AuditAccepted{}, fail(http.StatusForbidden, fmt.Sprintf("this token sends audit events only of cluster %q, not %q", who.cluster, name))
	}
	if err := h.checkHeaders(r); err != nil {
		return api.AuditAccepted{}, err
	}
	release, err := h.admit.AuditBatch(r.Context())
	if err != nil {
		return api.AuditAccepted{}, err
	}
	defer release()
	// The body's time starts once admitted: a wait for a turn is not the client's slowness.
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyTimeout)); err != nil {
		return api.AuditAccepted{}, fmt.Errorf("bound the audit batch's time: %w", err)
	}
	body, err := readLimited(http.MaxBytesReader(w, r.Body, int64(h.maxBytes)), h.maxBytes)
	if err != nil {
		return api.AuditAccepted{}, h.bodyError(err)
	}
	ctx, cancel := context.WithTimeout(h.work, auditTimeout)
	defer cancel()
	return h.count(ctx, name, body)
}

// checkHeaders refuses what the headers show is not a batch the server reads.
func (h *auditHandler) checkHeaders(r *http.Request) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return fail(http.StatusUnsupportedMediaType, "send the batch as Content-Type: application/json, as the API server's webhook backend does")
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return fail(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Encoding %q: send the batch uncompressed", enc))
	}
	if r.ContentLength > int64(h.maxBytes) {
		return h.tooLarge()
	}
	return nil
}

func (h *auditHandler) tooLarge() error {
	return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the batch is larger than %d bytes (--max-audit-batch-bytes); "+
		"lower the API server's --audit-webhook-batch-max-size or raise the server's bound", h.maxBytes))
}

func (h *auditHandler) bodyError(err error) error {
	err = bodyError(err, h.maxBytes, h.bodyTimeout)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusRequestEntityTooLarge {
		return h.tooLarge()
	}
	return err
}

// count adds the batch to the cluster's section in the store's transaction, and asks for
// the cluster's refresh when the batch named a caller, an API or a kubectl version the
// section did not have.
func (h *auditHandler) count(ctx context.Context, name string, body []byte) (api.AuditAccepted, error) {
	var before, after *audit.State
	rec, err := h.store.UpdateAuditCalls(ctx, name, func(stored []byte) ([]byte, error) {
		before = h.stored(name, stored)
		agg := audit.ResumeState(before, time.Time{})
		// The error says what is wrong with the batch (not an EventList, not JSON) and never
		// quotes it.
		if err := agg.ReadEventList(bytes.NewReader(body), int64(len(body)), auditSource); err != nil {
			return nil, fail(http.StatusBadRequest, err.Error())
		}
		after = agg.State()
		return gzipJSON(after)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.AuditAccepted{}, fail(http.StatusNotFound, fmt.Sprintf("no cluster named %q has pushed a snapshot yet: "+
			"the server takes its audit events once its agent (or upgradescope push) has pushed one", name))
	case err != nil:
		return api.AuditAccepted{}, err
	}
	if newInState(before, after) {
		h.refresh.schedule(rec.ClusterID)
	}
	out := api.AuditAccepted{ClusterID: rec.ClusterID, Batches: rec.Batches, Events: after.Events, Malformed: after.Malformed}
	if before != nil {
		out.Events, out.Malformed = after.Events-before.Events, after.Malformed-before.Malformed
	}
	return out, nil
}

// stored is the cluster's stored aggregation state, or nil for none. A state that cannot
// be read is replaced, counting from this batch: refusing the batch would not mend it (the
// webhook backend drops what is answered 4xx and retries 5xx for ever), and until then the
// cluster is judged without it (withAudit).
func (h *auditHandler) stored(name string, stored []byte) *audit.State {
	state, err := decodeAuditState(stored)
	if err != nil {
		h.log.Warn("the cluster's stored audit section could not be read: it is replaced, counting from this batch", "cluster", name, "err", err)
		return nil
	}
	return state
}

// auditMetrics count the batches by result (as upgradescope_ingest_total counts pushes)
// and the events they held; the route's requests and latency are the route metrics'.
type auditMetrics struct {
	batches *prometheus.CounterVec
	counted *prometheus.CounterVec
}

func newAuditMetrics() *auditMetrics {
	return &auditMetrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_audit_batches_total",
			Help: "Audit webhook batches by result: accepted, unauthorized, forbidden, not_found, invalid, too_large, busy, error."}, []string{"result"}),
		counted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "upgradescope_audit_events_total",
			Help: "Audit events in the webhook batches accepted, and of them the malformed ones (counted, skipped)."}, []string{"kind"}),
	}
}

func (m *auditMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.batches, m.counted}
}

func (m *auditMetrics) batch(result string) { m.batches.WithLabelValues(result).Inc() }

// refused counts a batch refused for its credential.
func (m *auditMetrics) refused(err error) { m.batch(auditResult(err)) }

func (m *auditMetrics) events(events, malformed int64) {
	m.counted.WithLabelValues("events").Add(float64(events))
	m.counted.WithLabelValues("malformed").Add(float64(malformed))
}

// auditResult is the metrics label of a refused batch: a push's (ingestResult), and
// not_found for a cluster that has not pushed yet.
func auditResult(err error) string {
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusNotFound {
		return "not_found"
	}
	return ingestResult(err)
}
