package advisor

import (
	"net/url"
	"strings"
)

// redactURL keeps a repository URL's scheme, host, port and path: userinfo, a query and a
// fragment can carry credentials.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<unparsed repository URL>"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// redactErr is err's message with the repository URL's secret parts cut out, however the
// reader quoted the URL.
func redactErr(err error, repository string) string {
	msg := err.Error()
	u, perr := url.Parse(repository)
	if repository == "" || perr != nil {
		return msg
	}
	msg = strings.ReplaceAll(msg, repository, redactURL(repository))
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.String())
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	if u.Fragment != "" {
		secrets = append(secrets, u.EscapedFragment(), u.Fragment)
	}
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "…")
	}
	return msg
}

func joinReasons(reasons []string) string { return strings.Join(reasons, "; ") }
