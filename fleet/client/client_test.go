package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/client"
)

func TestNewChecksTheURLAndTheCAFile(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		url  string
		opts []client.Option
		says string
	}{
		{name: "no http URL", url: "ftp://fleet", says: "server URL ftp://fleet: want an http:// or https:// URL with a host"},
		{name: "no host", url: "https://", says: "want an http:// or https:// URL with a host"},
		{name: "credentials in the URL", url: "https://u:secret@fleet", says: "without credentials, query or fragment"},
		{name: "a query", url: "https://fleet?x=1", says: "without credentials, query or fragment"},
		{name: "a CA file with plain http", url: "http://127.0.0.1:1", opts: []client.Option{client.WithCAFile(notPEM)},
			says: "server CA file needs an https server URL, not http://127.0.0.1:1"},
		{name: "a CA file without a certificate", url: "https://fleet", opts: []client.Option{client.WithCAFile(notPEM)},
			says: "no PEM certificate in it"},
		{name: "labels name the caller's settings", url: "ftp://fleet", opts: []client.Option{client.WithLabels(client.Labels{Server: "--server"})},
			says: "--server ftp://fleet: want"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.New(tt.url, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want one saying %q", err, tt.says)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the URL's password: %v", err)
			}
		})
	}
}

func TestATokenInClearTextIsWarnedOf(t *testing.T) {
	for _, tt := range []struct {
		url, token string
		warns      bool
	}{
		{"http://fleet.example.com", "t", true},
		{"http://127.0.0.1:8080", "t", false},
		{"http://[::1]:8080", "t", false},
		{"http://localhost:8080", "t", false},
		{"https://fleet.example.com", "t", false},
		{"http://fleet.example.com", "", false},
	} {
		c, err := client.New(tt.url, client.WithToken(tt.token))
		if err != nil {
			t.Fatal(err)
		}
		if warns := c.Warning() != ""; warns != tt.warns {
			t.Errorf("%s with token %q: warning %q, want one: %v", tt.url, tt.token, c.Warning(), tt.warns)
		}
	}
}
