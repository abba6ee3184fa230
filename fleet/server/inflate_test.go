package server

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func gz(t *testing.T, parts ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&out)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func TestInflatePooled(t *testing.T) {
	big := strings.Repeat("inventory ", 10_000)
	cases := []struct {
		name  string
		blob  []byte
		limit int
		want  string
		err   string
	}{
		{name: "a blob inflates to its bytes", blob: gz(t, big), limit: len(big), want: big},
		{name: "a blob of two members inflates to both, whatever the last trailer says", blob: gz(t, big, "tail"), limit: len(big) + 4, want: big + "tail"},
		{name: "an empty blob's member inflates to nothing", blob: gz(t, ""), limit: 10, want: ""},
		{name: "a blob past the limit is refused", blob: gz(t, big), limit: len(big) - 1, err: errTooLong.Error()},
		{name: "bytes that are not gzip are refused", blob: []byte("not gzip at all, not at all"), limit: 100, err: "gzip: invalid header"},
		{name: "a truncated blob is refused", blob: gz(t, big)[:40], limit: len(big), err: "unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Twice: the second inflate reuses the first's pooled buffer and reader.
			for range 2 {
				plain, release, err := inflatePooled(c.blob, c.limit)
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) {
						t.Fatalf("err = %v, want one saying %q", err, c.err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if string(plain) != c.want {
					t.Fatalf("inflated %d bytes, want %d", len(plain), len(c.want))
				}
				release()
			}
		})
	}
}
