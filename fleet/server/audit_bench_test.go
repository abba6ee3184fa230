package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkAuditBatch400 posts full batches (400 events, the API server's default
// --audit-webhook-batch-max-size, of 50 callers) over HTTP to a server on SQLite whose
// cluster's section already lists a thousand callers (inventory.MaxAuditCallers): each batch
// reads, inflates and decodes the section, counts the batch into it, and writes it back
// compressed, under the row's lock. 1/(ns/op) is batches a second for one cluster, ×400
// events.
//
// Measured 2026-12-02 on 2 cores shared with other work (AMD EPYC, linux/amd64), SQLite:
// 22–30 ms a batch (33–45 batches, 13,000–18,000 events a second for one cluster); the
// section of 1,000 callers is 274 KB of JSON, stored in 6 KB compressed (these callers' names
// differ by a number: real ones compress less).
func BenchmarkAuditBatch400(b *testing.B) {
	st := benchStore(b)
	ts := benchServer(b, st, server.Config{IngestToken: "bench"})
	doc := corpus.Cluster(50, 1)
	doc.ClusterID = "00000000-0000-4000-8000-000000000001"
	if status := postPush(b, ts, "bench", encodePush(b, "prod", doc)); status != http.StatusAccepted {
		b.Fatalf("push: %d", status)
	}
	for i := range 3 { // a thousand and more distinct callers, as a busy cluster's section lists
		var callers []caller
		for j := range 400 {
			callers = append(callers, caller{fmt.Sprintf("client-%d-%d/1.0", i, j), fmt.Sprintf("user-%d", j), "list", 1})
		}
		postAuditBench(b, ts, auditBatch(b, callers...))
	}
	var callers []caller
	for j := range 50 {
		callers = append(callers, caller{fmt.Sprintf("client-0-%d/1.0", j), fmt.Sprintf("user-%d", j), "list", 8})
	}
	batch := auditBatch(b, callers...)
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for range b.N {
		postAuditBench(b, ts, batch)
	}
	b.ReportMetric(float64(400*b.N)/b.Elapsed().Seconds(), "events/s")
	head, err := st.Head(b.Context(), "prod")
	if err != nil {
		b.Fatal(err)
	}
	rec, err := st.AuditCalls(b.Context(), head.ID)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(rec.Section)), "stored-section-bytes")
	sec := server.DecodeAuditSection(b, rec.Section)
	raw, _ := json.Marshal(sec)
	b.ReportMetric(float64(len(sec.Callers)), "callers")
	b.ReportMetric(float64(len(raw)), "section-json-bytes")
}

// postAuditBench posts a batch of cluster prod and fails b unless it is counted.
func postAuditBench(b *testing.B, ts *httptest.Server, body []byte) {
	b.Helper()
	req, err := http.NewRequest("POST", ts.URL+api.AuditPath+"prod", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer bench")
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("batch: %d", resp.StatusCode)
	}
}
