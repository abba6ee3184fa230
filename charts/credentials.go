package charts

import (
	"net/url"
	"strings"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

// Credentials are the repository credentials the GitOps objects name, read live for one
// run: Lookup is repo.Options.Credentials. A nil *Credentials names none. They are held in
// memory only; Note, the one thing said about them, names a Secret, never its content.
type Credentials struct {
	read []gitops.RepositoryCredential
}

// NewCredentials matches repositories against what ReadCredentials read.
func NewCredentials(read []gitops.RepositoryCredential) *Credentials {
	return &Credentials{read: read}
}

// Lookup returns the credentials for repository: a Secret for that exact repository first
// (scheme, host, port and path; OCI matched by host and path, as Argo CD writes OCI
// repositories without oci://), else the credential template whose URL is the longest
// prefix of it, as Argo CD chooses.
func (c *Credentials) Lookup(repository string) (repo.Credentials, bool) {
	e := c.match(repository, false)
	if e == nil {
		return repo.Credentials{}, false
	}
	return repo.Credentials{
		Username: e.Username, Password: e.Password,
		CertPEM: e.CertPEM, KeyPEM: e.KeyPEM, CAPEM: e.CAPEM,
		InsecureSkipTLSVerify: e.Insecure, PassCredentialsAll: e.PassCredentials,
	}, true
}

// Note says why repository's credentials were not read ("credentials secret ns/name not
// read: forbidden"), or "".
func (c *Credentials) Note(repository string) string {
	if e := c.match(repository, true); e != nil {
		return e.Unread
	}
	return ""
}

func (c *Credentials) match(repository string, unread bool) *gitops.RepositoryCredential {
	if c == nil {
		return nil
	}
	want := parseRepo(repository)
	var best *gitops.RepositoryCredential
	bestLen := -1
	for i := range c.read {
		e := &c.read[i]
		if (e.Unread != "") != unread {
			continue
		}
		have := parseRepo(e.URL)
		switch {
		case !have.sameScheme(want):
		case !e.Prefix && have.hostPath == want.hostPath:
			return e
		case e.Prefix && strings.HasPrefix(want.hostPath, have.hostPath) && len(have.hostPath) > bestLen:
			best, bestLen = e, len(have.hostPath)
		}
	}
	return best
}

// repoURL is a repository URL as credentials are matched: its scheme, and host, port and
// path without a trailing slash; no userinfo, query or fragment.
type repoURL struct{ scheme, hostPath string }

func parseRepo(raw string) repoURL {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "oci://" + raw // Argo CD's OCI repositories are written as host/path
	}
	u, err := url.Parse(raw)
	if err != nil {
		return repoURL{}
	}
	return repoURL{scheme: strings.ToLower(u.Scheme), hostPath: strings.ToLower(u.Host) + strings.TrimSuffix(u.Path, "/")}
}

func (a repoURL) sameScheme(b repoURL) bool {
	return a.hostPath != "" && (a.scheme == b.scheme || a.scheme == "oci" || b.scheme == "oci")
}

// noteUnread adds to each unread advice's reason why its repository's credentials were not
// read: the Secret's namespace and name, never its content.
func noteUnread(advice []inventory.ChartAdvice, creds *Credentials) {
	for i := range advice {
		a := &advice[i]
		note := creds.Note(a.Repository)
		if a.Read || note == "" || strings.Contains(a.Reason, note) {
			continue
		}
		if a.Reason == "" {
			a.Reason = note
		} else {
			a.Reason += "; " + note
		}
	}
}
