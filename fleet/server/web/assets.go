package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"strconv"
)

//go:embed assets/app.js assets/app.css
var assetFS embed.FS

// asset is one embedded file under its fingerprinted name.
type asset struct {
	name, contentType string
	body              []byte
}

// Assets are app.js and app.css, named by the hash of their content when the package
// loads, so a new build never meets an old cached copy and a cached copy never expires.
var (
	scriptAsset = load("app.js", "text/javascript; charset=utf-8")
	styleAsset  = load("app.css", "text/css; charset=utf-8")
)

func load(file, contentType string) asset {
	body, err := assetFS.ReadFile("assets/" + file)
	if err != nil {
		panic("web: embedded asset missing: " + file) // a build without it is broken
	}
	sum := sha256.Sum256(body)
	ext := file[len("app"):]
	return asset{name: "app." + hex.EncodeToString(sum[:6]) + ext, contentType: contentType, body: body}
}

// ScriptName and StyleName are the fingerprinted file names the shell links.
func ScriptName() string { return scriptAsset.name }
func StyleName() string  { return styleAsset.name }

// ServeAsset answers GET P/assets/{file}: the current fingerprinted files, cached for a
// year, immutable; any other name (an older build's) is 404, never a stale body.
func ServeAsset(w http.ResponseWriter, file string) {
	SecurityHeaders(w.Header())
	for _, a := range []asset{scriptAsset, styleAsset} {
		if a.name == file {
			w.Header().Set("Content-Type", a.contentType)
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
			_, _ = w.Write(a.body)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("no such asset\n"))
}
