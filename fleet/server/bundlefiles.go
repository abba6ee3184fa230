package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBundleWait caps an agent's long poll of /bundles/ below the listener's write timeout,
// so a held request is answered (304) rather than cut.
const maxBundleWait = 3 * time.Minute

// bundleFilesHandler serves GET /bundles/{name}.tar.gz, below the ingest credential
// middleware: the bundles of Config.PublishDir, as
// `bundle serve` serves them (an ETag, 304 for an unchanged one, long polls), to agents
// authenticated with the ingest token they push with, so one server and one token set
// distribute both data and policy. Agents verify the signatures themselves.
type bundleFilesHandler struct {
	// published serves Config.PublishDir.
	published http.Handler
}

func (h bundleFilesHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A name is a file of the directory itself: an escaped slash would reach below it.
	if name := r.PathValue("name"); strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		writeError(w, http.StatusNotFound, "no such bundle")
		return
	}
	if wait := r.Header.Get("Prefer"); wait != "" {
		r.Header.Set("Prefer", capWait(wait))
	}
	http.StripPrefix("/bundles", h.published).ServeHTTP(w, r)
}

// capWait rewrites a Prefer header's wait=N to at most maxBundleWait.
func capWait(prefer string) string {
	parts := strings.Split(prefer, ",")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), "wait="); ok {
			if n, err := strconv.Atoi(v); err == nil && time.Duration(n)*time.Second > maxBundleWait {
				parts[i] = fmt.Sprintf("wait=%d", int(maxBundleWait/time.Second))
			}
		}
	}
	return strings.Join(parts, ",")
}

// noBundles answers every bundle download of a server started without --publish-dir,
// before any credential is looked at.
func noBundles(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusNotFound, "this server publishes no bundles (serve --publish-dir)")
}
