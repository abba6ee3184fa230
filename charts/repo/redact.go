package repo

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// Redact returns url with only its scheme, host, port and path: no userinfo, query or
// fragment, which may carry credentials or signed tokens. It is the form of a repository
// URL in every error, cache file name and the inventory. Text that does not parse as a URL
// is cut at its first '?' or '#' and stripped of anything before an '@'.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		s, _, _ := strings.Cut(rawURL, "?")
		s, _, _ = strings.Cut(s, "#")
		if scheme, rest, ok := strings.Cut(s, "://"); ok {
			if _, host, ok := strings.Cut(rest, "@"); ok {
				return scheme + "://" + host
			}
		}
		return s
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// repoKey is the form a repository URL is compared and memoised by: redacted, without a
// trailing slash.
func repoKey(repository string) string { return strings.TrimSuffix(Redact(repository), "/") }

// readError is an error whose text was scrubbed of credentials. It unwraps to a context
// error only, never to the SDK's error, whose text may hold a URL with userinfo.
type readError struct {
	msg   string
	cause error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.cause }

// scrub builds the error "<what>: <reason>" from err with every secret and every raw URL
// replaced: the URLs by their redacted form, the secrets by "***".
func scrub(what string, err error, urls []string, secrets ...string) error {
	msg := err.Error()
	for _, u := range urls {
		if u != "" {
			msg = strings.ReplaceAll(msg, u, Redact(u))
		}
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	var cause error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	}
	return &readError{msg: what + ": " + msg, cause: cause}
}
