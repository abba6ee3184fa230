package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/internal/hostcheck"
)

// Path is where the streamable HTTP transport answers.
const Path = "/mcp"

// HTTPOptions guard the HTTP transport.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry. The command requires
	// one on any address but loopback.
	Token string
	// Hosts are host names answered besides loopback and the listener's own address
	// (--allowed-host), as serve answers them.
	Hosts []string
}

// sessionIdle closes an HTTP session no request has used for this long, so sessions a client
// abandoned do not pile up.
const sessionIdle = 30 * time.Minute

// maxRequestBody bounds one JSON-RPC message a client sends; tool inputs are small.
const maxRequestBody = 1 << 20

// Handler serves the streamable HTTP transport at Path behind three guards, in order: the
// Host check serve applies (421), cross-origin browser requests refused (403), and the
// bearer token (401).
func (s *Server) Handler(o HTTPOptions) http.Handler {
	// The SDK's own rebinding guard is off: it refuses every name but loopback on a loopback
	// listener, so --allowed-host (a local proxy's name) could never be answered; the Host
	// check below is serve's rule, which covers it and every other listener too.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: sessionIdle, MaxRequestBodyBytes: maxRequestBody, DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	mux.Handle(Path, bearer(o.Token, h))
	hosts := hostcheck.New(o.Hosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !hosts.Allow(r):
			http.Error(w, "this server does not answer to that host name", http.StatusMisdirectedRequest)
		case crossOrigin(r):
			http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// crossOrigin reports a request a browser sent on behalf of another site's page. Unlike
// net/http's CrossOriginProtection it refuses GET too: the transport's GET opens the event
// stream that carries answers.
func crossOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

// bearer refuses a request without the token; "" lets every request through.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110, section 11.1).
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		ok = ok && strings.EqualFold(scheme, "Bearer")
		got = strings.TrimLeft(got, " ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="upgradescope mcp"`)
			http.Error(w, "a bearer token is required (Authorization: Bearer <--http-token>)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
