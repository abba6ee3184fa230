package cluster_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
)

// The audit-log reader tells upgradescope's own reads by their user agent: every request
// the collector makes must carry it, whatever the binary's file name.
func TestCollectorRequestsCarryUpgradescopesUserAgent(t *testing.T) {
	tests := []struct {
		name, configured, want string
	}{
		{"the version the binary reports", cluster.UserAgent("v0.4.1"), "upgradescope/v0.4.1 (" + runtime.GOOS + "/" + runtime.GOARCH + ") collector"},
		{"dev when none is configured", "", "upgradescope/dev (" + runtime.GOOS + "/" + runtime.GOARCH + ") collector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			agents := map[string]bool{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				agents[r.UserAgent()] = true
				mu.Unlock()
				http.NotFound(w, r)
			}))
			defer srv.Close()
			col, err := cluster.New(&rest.Config{Host: srv.URL, UserAgent: tt.configured})
			if err != nil {
				t.Fatal(err)
			}
			col.CRDs(context.Background(), &inventory.Document{})
			mu.Lock()
			defer mu.Unlock()
			if len(agents) == 0 {
				t.Fatal("the collector made no request")
			}
			for a := range agents {
				if a != tt.want || !strings.HasPrefix(a, "upgradescope/") {
					t.Errorf("user agent %q, want %q", a, tt.want)
				}
			}
		})
	}
}
