package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// initialize is the first message a client sends: a request the transport answers 200 when
// every guard lets it through.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"browser","version":"1"}}}`

// rawRequest sends method to base's /mcp with host as Host (the URL's when "") and header,
// as a browser page or a rebinding attack would, and answers the status.
func rawRequest(t *testing.T, base, method, host string, header map[string]string) int {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(initialize)
	}
	req, err := http.NewRequest(method, base+mcpserver.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	// No body is read past the status line: a GET that passes opens an event stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A page in a browser can make the browser send requests to a server on loopback; the
// transport refuses them (403) for POST, which calls tools, and for GET, which opens the
// stream answers travel on. Requests a client other than a browser sends carry neither
// header and pass.
func TestHTTPRefusesCrossOriginBrowserRequests(t *testing.T) {
	base := serveHTTP(t, newServer(t, t.TempDir()), mcpserver.HTTPOptions{})
	self := strings.TrimPrefix(base, "http://")
	tests := []struct {
		name    string
		header  map[string]string
		refused bool
	}{
		{"another site's Origin", map[string]string{"Origin": "http://evil.example"}, true},
		{"another port on the same host is another origin", map[string]string{"Origin": "http://127.0.0.1:1"}, true},
		{"an opaque origin (a sandboxed frame, a file: page)", map[string]string{"Origin": "null"}, true},
		{"Sec-Fetch-Site cross-site without an Origin", map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"Sec-Fetch-Site same-site: a sibling subdomain is still another origin", map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{"cross-site with an Origin that names the server: the browser's own word wins", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": base}, true},
		{"the server's own origin", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, false},
		{"a request the user typed (Sec-Fetch-Site none)", map[string]string{"Sec-Fetch-Site": "none"}, false},
		{"no browser headers at all, as an MCP client sends", nil, false},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+" with "+tt.name, func(t *testing.T) {
				got := rawRequest(t, base, method, "", tt.header)
				switch {
				case tt.refused && got != http.StatusForbidden:
					t.Errorf("status %d, want 403", got)
				case !tt.refused && (got == http.StatusForbidden || got == http.StatusMisdirectedRequest):
					t.Errorf("status %d: refused a request from %s itself", got, self)
				case !tt.refused && method == http.MethodPost && got != http.StatusOK:
					t.Errorf("initialize answered %d, want 200", got)
				}
			})
		}
	}
}

// The Host check serve applies (internal/hostcheck): a DNS-rebinding page's name is not
// answered, 421, before the origin or the token is looked at; names given as allowed hosts
// are answered on a loopback listener too (behind a local proxy, say).
func TestHTTPAnswersOnlyTheHostsServeWould(t *testing.T) {
	base := serveHTTP(t, newServer(t, t.TempDir()), mcpserver.HTTPOptions{Hosts: []string{"MCP.example.com"}, Token: "s3cret"})
	port := base[strings.LastIndex(base, ":"):]
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	tests := []struct {
		name   string
		host   string
		header map[string]string
		want   int
	}{
		{"a rebinding page's name", "evil.example" + port, auth, http.StatusMisdirectedRequest},
		{"a rebinding page's name, even cross-origin and without a token: the Host is checked first", "evil.example",
			map[string]string{"Origin": "http://evil.example"}, http.StatusMisdirectedRequest},
		{"a loopback address in brackets with a port inside", "[127.0.0.1:80]:80", auth, http.StatusMisdirectedRequest},
		{"localhost", "localhost" + port, auth, http.StatusOK},
		{"the IPv6 loopback", "[::1]" + port, auth, http.StatusOK},
		{"an allowed host, in other case", "mcp.EXAMPLE.com" + port, auth, http.StatusOK},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, tt := range tests {
			t.Run(method+" with "+tt.name, func(t *testing.T) {
				got := rawRequest(t, base, method, tt.host, tt.header)
				if tt.want == http.StatusOK {
					// A GET without a session is the transport's to refuse (400); the guards must not.
					if got == http.StatusMisdirectedRequest || got == http.StatusForbidden || got == http.StatusUnauthorized ||
						method == http.MethodPost && got != http.StatusOK {
						t.Errorf("status %d, want the request answered", got)
					}
					return
				}
				if got != tt.want {
					t.Errorf("status %d, want %d", got, tt.want)
				}
			})
		}
	}
}

// headerTransport adds header to every request and remembers the Origin each one carried.
type headerTransport struct {
	header  map[string]string
	mu      sync.Mutex
	origins []string
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header.Set(k, v)
	}
	h.mu.Lock()
	h.origins = append(h.origins, r.Header.Get("Origin"))
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// sdkClient connects the SDK's client to base with header on every request.
func sdkClient(base string, rt *headerTransport) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpserver.Path, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil)
}

// With a token, every request needs it: none or another is 401 and names the header; the
// SDK's client carrying it lists and calls tools.
func TestHTTPWithATokenAnswersOnlyRequestsThatCarryIt(t *testing.T) {
	base := serveHTTP(t, newServer(t, repoRoot(t)), mcpserver.HTTPOptions{Token: "s3cret"})
	for name, header := range map[string]map[string]string{
		"no Authorization":              nil,
		"another token":                 {"Authorization": "Bearer s3cret-not"},
		"a prefix of the token":         {"Authorization": "Bearer s3cre"},
		"the token without Bearer":      {"Authorization": "s3cret"},
		"the token as Basic credential": {"Authorization": "Basic s3cret"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				if got := rawRequest(t, base, method, "", header); got != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401", method, got)
				}
			}
			if cs, err := sdkClient(base, &headerTransport{header: header}); err == nil {
				_ = cs.Close()
				t.Error("the SDK client connected without the token")
			}
		})
	}
	t.Run("the token under a scheme in any case", func(t *testing.T) {
		for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret"} {
			if got := rawRequest(t, base, http.MethodPost, "", map[string]string{"Authorization": h}); got == http.StatusUnauthorized {
				t.Errorf("Authorization: %s answered 401: the scheme is case-insensitive, and spaces may follow it", h)
			}
		}
	})
	t.Run("the token", func(t *testing.T) {
		cs, err := sdkClient(base, &headerTransport{header: map[string]string{"Authorization": "Bearer s3cret"}})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("tools/list: %v, %v", tools, err)
		}
		a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.37"}})
		if len(a.Targets) != 1 || a.Targets[0].Verdict != "blocked" {
			t.Errorf("scan through the token: %+v", a.Targets)
		}
	})
}

// The SDK's client sends no Origin (it is not a browser), and is answered without one: the
// origin guard must not shut out the clients it exists for.
func TestHTTPAnswersTheSDKClientWhichSendsNoOrigin(t *testing.T) {
	base := serveHTTP(t, newServer(t, repoRoot(t)), mcpserver.HTTPOptions{})
	rt := &headerTransport{}
	cs, err := sdkClient(base, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.origins) < 2 {
		t.Fatalf("%d requests seen, want the initialize and tools/list at least", len(rt.origins))
	}
	for i, o := range rt.origins {
		if o != "" {
			t.Errorf("request %d carried Origin %q: the test no longer proves a client without one is answered", i, o)
		}
	}
}
