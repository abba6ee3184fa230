package audit

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkReadAuditLog reads a 64 MiB log of hack/corpus.AuditLog's shape (tools/auditgen's)
// through Collect, as --audit-log - reads standard input.
//
// Last measured (2026-12-02, 2-core AMD EPYC VM shared with other jobs, go1.26.8):
// 170–211 MB/s, 55 MB and 683,000 allocations per 64 MiB (about 14 per event). Decoding is
// most of it: go-json-experiment's Unmarshal read these lines at 2–3 times encoding/json's
// speed on the same machine and the same minutes, hence decodeOptions.
func BenchmarkReadAuditLog(b *testing.B) {
	var log bytes.Buffer
	want, err := corpus.AuditLog(&log, corpus.AuditOptions{Size: 64 << 20, Agents: 1000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(log.Len()))
	b.ReportAllocs()
	for b.Loop() {
		s, _, err := Collect(context.Background(), Options{Paths: []string{"-"}, Stdin: bytes.NewReader(log.Bytes()), Since: time.Unix(0, 0)})
		if err != nil {
			b.Fatal(err)
		}
		if s.Events != want.Events || s.DeprecatedRequests != want.Deprecated || s.Malformed != 0 {
			b.Fatalf("read %d events, %d deprecated, %d malformed; want %d, %d, 0", s.Events, s.DeprecatedRequests, s.Malformed, want.Events, want.Deprecated)
		}
	}
}
