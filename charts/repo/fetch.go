package repo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"helm.sh/helm/v4/pkg/getter"
)

// download gets href, a file of repository, through Helm's HTTP getter with the
// repository's credentials: basic auth goes to href only on the repository's scheme and
// host unless PassCredentialsAll, as Helm does. The body is bounded by limit and the read
// by the Reader's timeout; what ("index", "chart web 1.0.0") names the read in errors.
func (r *Reader) download(ctx context.Context, repository, href string, limit int64, what string) ([]byte, error) {
	repository, creds := r.credentialsFor(repository)
	href, _, _ = stripUserinfo(href)
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	tlsConf, err := tlsConfig(creds)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, Redact(href), err)
	}
	t := newBoundedTransport(ctx, limit, tlsConf)
	defer t.CloseIdleConnections()
	g, err := getter.NewHTTPGetter(getter.WithTimeout(r.opts.Timeout), getter.WithTransport(t.Transport))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, Redact(href), err)
	}
	buf, err := g.Get(href,
		getter.WithURL(repository),
		getter.WithBasicAuth(creds.Username, creds.Password),
		getter.WithPassCredentialsAll(creds.PassCredentialsAll),
	)
	if t.exceeded.Load() || (err == nil && int64(buf.Len()) > limit) {
		return nil, fmt.Errorf("%s of %s larger than %s", what, Redact(repository), sizeText(limit))
	}
	if err != nil {
		return nil, r.readFailure(ctx, "read "+what+" "+Redact(href), err, []string{href, repository}, creds)
	}
	return buf.Bytes(), nil
}

// readFailure words a failed read for a user: the status for an HTTP answer, a timeout as
// such, anything else scrubbed of URLs and credentials.
func (r *Reader) readFailure(ctx context.Context, what string, err error, urls []string, creds Credentials) error {
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return &readError{
			msg:   fmt.Sprintf("%s: no answer within %s (the repository read timeout)", what, r.opts.Timeout),
			cause: context.DeadlineExceeded,
		}
	case errors.Is(ctx.Err(), context.Canceled):
		return &readError{msg: what + ": cancelled", cause: context.Canceled}
	}
	// Helm's getter says "failed to fetch <url> : <status>"; the status is the news.
	if msg := err.Error(); strings.HasPrefix(msg, "failed to fetch ") {
		if i := strings.LastIndex(msg, " : "); i >= 0 {
			return &readError{msg: what + ": " + msg[i+3:]}
		}
	}
	return scrub(what, err, urls, creds.Password)
}

// stripUserinfo returns rawURL without its userinfo, and the user and password it held:
// the URL is then safe to hand to an SDK that may print it, and the secrets travel as
// credentials only.
func stripUserinfo(rawURL string) (clean, user, password string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL, "", ""
	}
	user = u.User.Username()
	password, _ = u.User.Password()
	u.User = nil
	return u.String(), user, password
}
