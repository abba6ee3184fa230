package hostcheck

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAllowAnswersLoopbackTheArrivalAddressAndTheListedHostsOnly(t *testing.T) {
	listed := New([]string{"Fleet.Example.com", "10.1.2.3", "fd00::7"})
	tests := []struct {
		name    string
		host    string
		arrived string // the listener's address the request came in on; "" when unknown
		want    bool
	}{
		{"localhost with a port", "localhost:8765", "", true},
		{"localhost in capitals", "LOCALHOST:8765", "", true},
		{"the IPv4 loopback", "127.0.0.1:8765", "", true},
		{"another address in 127.0.0.0/8", "127.9.9.9", "", true},
		{"the IPv6 loopback bracketed with a port", "[::1]:8765", "", true},
		{"the IPv6 loopback bracketed without a port", "[::1]", "", true},
		{"a listed host in other case, with a port: names ignore case and ports are never compared", "FLEET.example.COM:443", "", true},
		{"a listed host exactly", "fleet.example.com", "", true},
		{"a listed IPv4 address", "10.1.2.3:8765", "", true},
		{"a listed IPv6 address, bracketed with a port", "[FD00::7]:8765", "", true},
		{"the address the request arrived on (a probe to the pod IP)", "10.9.8.7:8765", "10.9.8.7:8765", true},
		{"the IPv6 address the request arrived on, in other case", "[FD00::1]:8765", "[fd00::1]:8765", true},
		{"a rebinding page's name", "evil.example", "", false},
		{"a rebinding page's name with a port, on a loopback listener", "evil.example:8765", "127.0.0.1:8765", false},
		{"a loopback address wrapped in brackets with a port inside: stripping twice would take it", "[127.0.0.1:80]:80", "", false},
		{"a name ending in a listed one", "evil.fleet.example.com", "", false},
		{"a name starting like localhost", "localhost.evil.example", "", false},
		{"an address other than the one the request arrived on", "10.9.8.6:8765", "10.9.8.7:8765", false},
		{"every interface", "0.0.0.0:8765", "", false},
		{"no Host at all", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
			r.Host = tt.host
			if tt.arrived != "" {
				addr, err := net.ResolveTCPAddr("tcp", tt.arrived)
				if err != nil {
					t.Fatal(err)
				}
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
			}
			if got := listed.Allow(r); got != tt.want {
				t.Errorf("Allow(Host %q, arrived on %q) = %v, want %v", tt.host, tt.arrived, got, tt.want)
			}
		})
	}
}

func TestNoListedHostsAnswersLoopbackOnly(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "[::1]:1": true, "fleet.example.com": false} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		if got := New(nil).Allow(r); got != want {
			t.Errorf("Allow(%q) with no --allowed-host = %v, want %v", host, got, want)
		}
	}
}

func TestOnlyStripsThePortAndTheBracketsAndFoldsCase(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a name with a port", "Fleet.Example.com:8080", "fleet.example.com"},
		{"a name without one", "fleet.example.com", "fleet.example.com"},
		{"an IPv6 address bracketed with a port", "[FD00::1]:443", "fd00::1"},
		{"an IPv6 address bracketed without a port", "[::1]", "::1"},
		{"brackets around a host and port stay a host and port, which nothing answers", "[127.0.0.1:80]:80", "127.0.0.1:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Only(tt.in); got != tt.want {
				t.Errorf("Only(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
