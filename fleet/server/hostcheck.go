package server

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/internal/loopback"
)

// hostCheck answers 421 to a request whose Host is not one the server answers to, before
// any route or credential is looked at: on loopback, a page that rebinds its own name to
// 127.0.0.1 must read nothing. Allowed: localhost, loopback addresses, the address the
// request arrived on, and hosts; ports are never compared. refused is told of each request
// refused; a warning is logged at most once a minute by now.
func hostCheck(hosts []string, log *slog.Logger, now func() time.Time, refused func()) func(http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range hosts {
		allowed[strings.ToLower(h)] = true
	}
	return func(next http.Handler) http.Handler {
		var lastLog atomic.Int64 // unix nanoseconds of the last warning
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host := hostOnly(r.Host)
			// loopback.Is reads the header as it came: given hostOnly's result it would strip a
			// port a second time, and "[127.0.0.1:80]:80" would pass.
			if allowed[host] || loopback.Is(r.Host) || host == localAddr(r) {
				next.ServeHTTP(w, r)
				return
			}
			refused()
			if t := now().UnixNano(); t-lastLog.Load() > int64(time.Minute) {
				lastLog.Store(t)
				log.Warn("refused a request for another host (DNS rebinding guard); add it with --allowed-host if it is yours", "host", host)
			}
			web.SecurityHeaders(w.Header()) // the answer a rebound page gets, which may be shown as a page
			writeError(w, http.StatusMisdirectedRequest, "this server does not answer to that host name")
		})
	}
}

// hostOnly strips the port and brackets from a Host header and lowercases it.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// localAddr is the IP the request arrived on (a probe or scrape to the pod IP), "" when unknown.
func localAddr(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	return hostOnly(addr.String())
}
