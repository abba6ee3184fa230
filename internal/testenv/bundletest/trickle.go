package bundletest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Trickle is a bundle server that answers 200 and then one byte every 20 ms until the client
// gives up, as the slow server of issue 13 did; it is closed when the test ends.
func Trickle(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{0x1f}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
