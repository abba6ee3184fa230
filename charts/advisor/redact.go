package advisor

import (
	"net/url"
	"strings"

	"github.com/upgradescope/upgradescope/charts/repo"
)

// redactErr is err's message with the repository URL's secret parts cut out, however it was
// quoted: the Reader scrubs its own errors, and this keeps a Repository that does not (or a
// Locate error quoting Helm's configuration) from leaking one into the advice.
func redactErr(err error, repository string) string {
	msg := err.Error()
	u, perr := url.Parse(repository)
	if repository == "" || perr != nil {
		return msg
	}
	msg = strings.ReplaceAll(msg, repository, repo.Redact(repository))
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
