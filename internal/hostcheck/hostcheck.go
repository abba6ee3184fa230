// Package hostcheck is the DNS-rebinding guard every listener of ours applies (serve, mcp
// --http): a request is answered only when its Host is one the server answers to, so a page
// that rebinds its own name to 127.0.0.1 reads nothing.
package hostcheck

import (
	"net"
	"net/http"
	"strings"

	"github.com/upgradescope/upgradescope/internal/loopback"
)

// Hosts are the host names a listener answers to besides loopback and its own address.
type Hosts map[string]bool

// New lists hosts (bare names or IPs, as --allowed-host takes them), case-folded.
func New(hosts []string) Hosts {
	h := Hosts{}
	for _, name := range hosts {
		h[strings.ToLower(name)] = true
	}
	return h
}

// Allow reports whether r's Host is answered: localhost, a loopback address, the address
// the request arrived on, or one of h; ports are never compared.
func (h Hosts) Allow(r *http.Request) bool {
	host := Only(r.Host)
	// loopback.Is reads the header as it came: given Only's result it would strip a port a
	// second time, and "[127.0.0.1:80]:80" would pass.
	// An unknown arrival address ("") must not match an empty Host.
	return h[host] || loopback.Is(r.Host) || host != "" && host == localAddr(r)
}

// Only strips the port and brackets from a Host header and lowercases it.
func Only(h string) string {
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
	return Only(addr.String())
}
