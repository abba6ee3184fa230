package repo

import (
	"context"
	"fmt"
	"strings"
)

// Locate finds the repository of a Helm release's chart, which Helm's storage does not
// record: the first repository of Helm's repositories.yaml, in file order, whose index
// holds chart at exactly version. Repositories that cannot be read are passed over and
// named in the error when none holds the chart. The entries' credentials are used for those
// repositories by every later call of the Reader too.
func (r *Reader) Locate(ctx context.Context, chart, version string) (Ref, error) {
	h := r.helmRepositories()
	if h.err != nil {
		return Ref{}, h.err
	}
	var unread []string
	read := 0
	for _, e := range h.entries {
		if isOCI(e.URL) {
			continue // Helm keeps OCI registries out of repositories.yaml; skip a stray one
		}
		idx, err := r.index(ctx, e.URL)
		if err != nil {
			if ctx.Err() != nil {
				return Ref{}, err
			}
			unread = append(unread, fmt.Sprintf("%s (%v)", e.Name, err))
			continue
		}
		read++
		if exactVersion(idx, chart, version) != nil {
			return Ref{Repository: e.URL, Chart: chart}, nil
		}
	}
	msg := fmt.Sprintf("no repository in %s holds chart %s version %s (read %d of %d repositories",
		h.file, chart, version, read, len(h.entries))
	if len(unread) > 0 {
		msg += "; could not read: " + strings.Join(unread, "; ")
	}
	return Ref{}, fmt.Errorf("%s)", msg)
}
