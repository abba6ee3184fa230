package loopback

import "testing"

func TestIs(t *testing.T) {
	tests := []struct {
		name string
		host string
		want bool
	}{
		{"the IPv4 loopback", "127.0.0.1", true},
		{"any address in 127.0.0.0/8", "127.4.5.6", true},
		{"the IPv6 loopback", "::1", true},
		{"the IPv6 loopback bracketed, as a URL writes it", "[::1]", true},
		{"the IPv6 loopback written out", "0:0:0:0:0:0:0:1", true},
		{"the IPv4 loopback mapped into IPv6", "::ffff:127.0.0.1", true},
		{"localhost", "localhost", true},
		{"localhost in capitals: DNS names ignore case", "LOCALHOST", true},
		{"localhost in mixed case", "LocalHost", true},
		{"the IPv4 loopback with a port", "127.0.0.1:8080", true},
		{"the IPv6 loopback with a port", "[::1]:8080", true},
		{"localhost with a port", "localhost:8080", true},
		{"localhost with an empty port", "localhost:", true},
		{"the absolute name localhost. is not taken", "localhost.", false},
		{"nor in capitals", "LOCALHOST.", false},
		{"a name ending in localhost", "localhost.example", false},
		{"a name under localhost", "app.localhost", false},
		{"a name starting with localhost", "localhostx", false},
		{"every interface (IPv4)", "0.0.0.0", false},
		{"every interface (IPv6)", "::", false},
		{"every interface by an empty host with a port", ":8080", false},
		{"the empty host", "", false},
		{"a private address", "10.0.0.1", false},
		{"a public name", "example.com", false},
		{"a public name with a port", "example.com:443", false},
		{"an address next to 127/8", "128.0.0.1", false},
		{"an IPv6 address whose last group is 1", "::2:1", false},
		{"an IPv6 loopback with a zone does not parse", "::1%lo", false},
		{"doubled brackets", "[[::1]]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is(tt.host); got != tt.want {
				t.Errorf("Is(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}
