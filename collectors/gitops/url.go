// Package gitops reads the charts Argo CD Applications and Flux HelmReleases declare, for a
// cluster whose charts leave no Helm release record (Argo CD renders with helm template).
package gitops

import (
	"regexp"
	"strings"
)

var (
	schemePrefix = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	// An OCI reference pinned by digest ends in @algorithm:hex; that @ is no userinfo.
	digestSuffix = regexp.MustCompile(`@(sha256|sha384|sha512):[0-9A-Fa-f]{32,}$`)
)

// SanitizeURL keeps a repository URL's scheme, host, port and path and nothing that can carry
// a credential. It does not parse the URL: everything up to the last @ is dropped, so a
// password holding a /, ? or # cannot leak, and a ? or # before that @ (a query that may hold
// a token next to an address) makes the whole URL empty. An OCI digest survives.
func SanitizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	digest := digestSuffix.FindString(s)
	s = strings.TrimSuffix(s, digest)
	scheme := schemePrefix.FindString(s)
	rest := strings.TrimPrefix(s, scheme)
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if strings.ContainsAny(rest[:at], "?#") {
			return ""
		}
		rest = rest[at+1:]
	}
	if cut := strings.IndexAny(rest, "?#"); cut >= 0 {
		rest = rest[:cut]
	}
	if rest == "" {
		return ""
	}
	return scheme + rest + digest
}

// ociChartName is the last element of an oci:// repository path, the way Argo CD names a chart
// from an OCI source; a URL with no repository path below the registry host names none.
func ociChartName(sanitized string) string {
	rest, ok := cutPrefixFold(sanitized, "oci://")
	if !ok {
		return ""
	}
	rest = digestSuffix.ReplaceAllString(rest, "")
	rest = strings.TrimRight(rest, "/")
	slash := strings.LastIndex(rest, "/")
	if slash < 0 {
		return ""
	}
	name := rest[slash+1:]
	// A tag on the reference (repo:1.2.3) is not part of the name; a port is never after the
	// last slash.
	if colon := strings.Index(name, ":"); colon >= 0 {
		name = name[:colon]
	}
	return name
}

// lastPathElement names a chart given as a path in a Git repository or a Bucket.
func lastPathElement(path string) string {
	path = strings.TrimRight(strings.TrimSpace(path), "/")
	if i := strings.LastIndex(path, "/"); i >= 0 {
		path = path[i+1:]
	}
	if path == "." || path == ".." {
		return ""
	}
	return path
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
