package repo

import (
	"errors"
	"fmt"
	"io/fs"

	"helm.sh/helm/v4/pkg/cli"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
)

// helmRepos is Helm's repositories.yaml as a Reader uses it: the entries in file order
// and their credentials by repository.
type helmRepos struct {
	file    string
	entries []*repov1.Entry
	creds   map[string]Credentials
	err     error // the file could not be read; a missing file is no error
}

// repositoryConfig is Options.RepositoryConfig or Helm's default.
func (r *Reader) repositoryConfig() string {
	if r.opts.RepositoryConfig != "" {
		return r.opts.RepositoryConfig
	}
	return cli.New().RepositoryConfig
}

// helmRepositories reads repositories.yaml once per Reader.
func (r *Reader) helmRepositories() *helmRepos {
	r.helmReposOnce.Do(func() {
		h := &helmRepos{file: r.repositoryConfig(), creds: map[string]Credentials{}}
		f, err := repov1.LoadFile(h.file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			// LoadFile's error may quote the file's text; the path is all a user needs.
			h.err = fmt.Errorf("read Helm repositories %s: the file is not a repositories.yaml", h.file)
		default:
			h.entries = f.Repositories
		}
		for _, e := range h.entries {
			key := repoKey(e.URL)
			if _, seen := h.creds[key]; !seen {
				// An entry written with its credentials in the URL (http://user:pw@host/)
				// and no username field authenticates with the URL's, as Helm's getter would.
				user, password := e.Username, e.Password
				if user == "" && password == "" {
					_, user, password = stripUserinfo(e.URL)
				}
				h.creds[key] = Credentials{
					Username: user, Password: password,
					CertFile: e.CertFile, KeyFile: e.KeyFile, CAFile: e.CAFile,
					InsecureSkipTLSVerify: e.InsecureSkipTLSVerify, PassCredentialsAll: e.PassCredentialsAll,
				}
			}
		}
		r.helmRepos = h
	})
	return r.helmRepos
}

// credentialsFor returns repository without userinfo and the credentials to read it with:
// Helm's entry for the repository first, then Options.Credentials, then any userinfo the
// URL itself carried.
func (r *Reader) credentialsFor(repository string) (string, Credentials) {
	clean, user, password := stripUserinfo(repository)
	if c, ok := r.helmRepositories().creds[repoKey(repository)]; ok {
		return clean, c
	}
	if r.opts.Credentials != nil {
		if c, ok := r.opts.Credentials(repository); ok {
			return clean, c
		}
	}
	return clean, Credentials{Username: user, Password: password}
}
