package server

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// NormalPublicURL checks a public URL, the address at which people open the dashboard
// (--public-url): an absolute http or https URL with a host, no user information, no query
// and no fragment. It answers it without a trailing slash; "" is no public URL.
func NormalPublicURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	var uerr *url.Error
	switch {
	case errors.As(err, &uerr):
		// Not the URL itself: it may hold a password.
		return "", fmt.Errorf("public URL is not a URL: %w", uerr.Err)
	case err != nil:
		return "", fmt.Errorf("public URL is not a URL: %w", err)
	case u.User != nil:
		return "", fmt.Errorf("public URL %s://%s/…: remove the user information; notifications carry the URL to every receiver", u.Scheme, u.Host)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("public URL %q: want an absolute http or https URL with a host, as https://fleet.example.com", raw)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", fmt.Errorf("public URL %q: remove the query and the fragment; links are built below its path", raw)
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// dashboardBase is where links into the dashboard start: the public URL, with the path
// prefix added when the URL names no path (the proxy in front passes the path on, since
// nothing answers outside the prefix). A URL with a path is taken as given: the proxy may
// map its own path onto the prefix. "" when there is no public URL: a link is never
// guessed from a request's Host.
func dashboardBase(publicURL, prefix string) (string, error) {
	base, err := NormalPublicURL(publicURL)
	if err != nil || base == "" {
		return "", err
	}
	if u, _ := url.Parse(base); u.Path == "" {
		base += prefix
	}
	return base, nil
}

// clusterPage is the dashboard page of cluster id under base, "" without a base.
func clusterPage(base string, id int64) string {
	if base == "" {
		return ""
	}
	return base + "/clusters/" + strconv.FormatInt(id, 10)
}
