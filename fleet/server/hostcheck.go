package server

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/internal/hostcheck"
)

// hostCheck answers 421 to a request whose Host is not one the server answers to, before
// any route or credential is looked at: on loopback, a page that rebinds its own name to
// 127.0.0.1 must read nothing. Allowed: localhost, loopback addresses, the address the
// request arrived on, and hosts; ports are never compared. refused is told of each request
// refused; a warning is logged at most once a minute by now.
func hostCheck(hosts []string, log *slog.Logger, now func() time.Time, refused func()) func(http.Handler) http.Handler {
	allowed := hostcheck.New(hosts)
	return func(next http.Handler) http.Handler {
		var lastLog atomic.Int64 // unix nanoseconds of the last warning
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if allowed.Allow(r) {
				next.ServeHTTP(w, r)
				return
			}
			refused()
			if t := now().UnixNano(); t-lastLog.Load() > int64(time.Minute) {
				lastLog.Store(t)
				log.Warn("refused a request for another host (DNS rebinding guard); add it with --allowed-host if it is yours", "host", hostcheck.Only(r.Host))
			}
			web.SecurityHeaders(w.Header()) // the answer a rebound page gets, which may be shown as a page
			writeError(w, http.StatusMisdirectedRequest, "this server does not answer to that host name")
		})
	}
}
