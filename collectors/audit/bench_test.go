package audit

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkReadAuditLog reads a 64 MiB log of hack/corpus.AuditLog's shape through Collect.
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
