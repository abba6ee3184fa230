package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/server/web"
)

// prefixSegment is one segment a path prefix may have.
var prefixSegment = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// NormalPathPrefix checks a path prefix ("/upgradescope") and writes it without a
// trailing slash; "" and "/" are no prefix.
func NormalPathPrefix(p string) (string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path prefix %q: start it with /, as /upgradescope", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if !prefixSegment.MatchString(seg) || seg == "." || seg == ".." {
			return "", fmt.Errorf("path prefix %q: each segment may hold letters, digits and . _ ~ - only", p)
		}
	}
	return p, nil
}

// underPrefix serves h under the prefix only: the prefix itself redirects to prefix/ with
// its query (a shared link keeps its filters), and every path outside it is 404, so
// nothing answers where an Ingress does not route.
func underPrefix(prefix string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	mux.HandleFunc(prefix, func(w http.ResponseWriter, r *http.Request) {
		to := prefix + "/"
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		web.SecurityHeaders(w.Header())
		http.Redirect(w, r, to, http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		web.SecurityHeaders(w.Header())
		writeError(w, http.StatusNotFound, "not found: this server answers under "+prefix+"/")
	})
	return mux
}
