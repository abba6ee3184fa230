package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// FuzzAuditRead reads anything as an audit log, plain and gzip-compressed, and as a webhook
// batch: reading never panics, and the section stays within the schema's bounds, counts
// every deprecated request once, and the webhook's state resumes as itself.
func FuzzAuditRead(f *testing.F) {
	real, err := os.ReadFile("testdata/kube-apiserver-1.35.log")
	if err != nil {
		f.Fatal(err)
	}
	event := strings.TrimSpace(lines(f, fsList("a/1")))
	for _, seed := range []string{
		string(real),
		event + "\n" + event,
		"2026-12-01T10:00:00Z " + event + "\n",
		"[" + event + "," + event + "]",
		`{"kind":"EventList","items":[` + event + `]}`,
		"{\n \"records\": [\n" + event + "\n ]\n}\n",
		`{"events":[{"message":"x"}]}`,
		"not json\n{\"auditID\":1}\n",
		`{"items":[{"items":[{"items":[{"items":[1]}]}]}]}`,
		"\xef\xbb\xbf" + event,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	// the managed providers' export shapes, as a user's file
	samples, err := filepath.Glob("testdata/providers/*.json*")
	if err != nil || len(samples) == 0 {
		f.Fatalf("provider samples: %v", err)
	}
	for _, sample := range samples {
		data, err := os.ReadFile(sample)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		in := data
		if compress {
			in = gz(t, string(data))
		}
		s, c, err := Collect(context.Background(), Options{Paths: []string{"-"}, Stdin: bytes.NewReader(in), Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if c.Available != (s.Events > 0) || !c.Available && !strings.HasPrefix(c.Reason, "the audit log holds no audit event: ") {
			t.Errorf("capability = %+v after %d events, want available when there are some, else why not", c, s.Events)
		}
		checkSection(t, s.Events, s.Requests, s.DeprecatedRequests, s)
		a := NewAggregator(since)
		if err := a.ReadEventList(bytes.NewReader(data), 1<<20, "webhook"); err == nil {
			s := a.Section()
			checkSection(t, s.Events, s.Requests, s.DeprecatedRequests, s)
			again := ResumeState(a.State(), since)
			if !reflect.DeepEqual(again.Section(), s) || !reflect.DeepEqual(again.Capability(), a.Capability()) {
				t.Errorf("ResumeState(a.State()) differs from a:\n%+v\n%+v", again.Section(), s)
			}
		}
	})
}

func checkSection(t *testing.T, events, requests, deprecated int64, s *inventory.AuditCalls) {
	t.Helper()
	validate(t, s)
	if events < requests || requests < deprecated || s.Malformed < int64(len(s.MalformedAt)) {
		t.Errorf("events %d, requests %d, deprecated %d, malformed %d named %d: want each within the one before",
			events, requests, deprecated, s.Malformed, len(s.MalformedAt))
	}
	calls := s.OmittedAPIs
	for _, c := range s.Callers {
		calls += c.Count
	}
	for _, o := range s.Omitted {
		calls += o.Calls
	}
	if calls+s.OwnReads != deprecated {
		t.Errorf("callers and omitted rows count %d calls and %d own reads, want the %d deprecated requests", calls, s.OwnReads, deprecated)
	}
}
