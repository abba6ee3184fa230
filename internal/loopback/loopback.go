// Package loopback holds the one test of whether an address stays on this machine: the
// DNS-rebinding guard, the "token in clear text" warnings and the listeners that relax
// credentials on loopback all ask it, so they cannot disagree about "localhost".
package loopback

import (
	"net"
	"strings"
)

// Is reports whether host names this machine's loopback interface: an IP in 127.0.0.0/8 or
// ::1 (also IPv4-mapped), or the name localhost in any case (DNS names are case-insensitive,
// and Go's resolver reads /etc/hosts so). host is as a URL, a Host header or a listen address
// writes it: an IPv6 address may be bracketed, and a port, if present, is ignored.
//
// The answer is false for everything else, failing closed: the empty host and 0.0.0.0 (they
// bind every interface), other names that merely resolve to loopback (localhost.example,
// foo.localhost), and the absolute name "localhost." (no caller sees it, and each refusal is
// the cautious answer: a warning, a 421, a credential asked for).
func Is(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
