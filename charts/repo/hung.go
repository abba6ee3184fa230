package repo

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// hung remembers the repositories a chart archive read timed out on. The indexes' memo
// already fails a hung repository's index once per Reader; archives are read per version,
// so without this a repository whose archive host hangs would cost one timeout for every
// version the advisor asks of it.
type hung struct {
	mu   sync.Mutex
	errs map[string]error
}

// check is, when a previous archive read of repository (a repoKey) timed out, the error for
// reading what ("chart web 1.1.0") now: that timeout, wrapped.
func (h *hung) check(repository, what string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.errs[repository]; err != nil {
		return fmt.Errorf("%s not read, as an earlier archive read of the same repository timed out: %w", what, err)
	}
	return nil
}

// note records err for repository when it is the read's own timeout. A caller's deadline or
// cancellation says nothing of the repository and is not recorded.
func (h *hung) note(ctx context.Context, repository string, err error) {
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errs == nil {
		h.errs = map[string]error{}
	}
	if _, ok := h.errs[repository]; !ok {
		h.errs[repository] = err
	}
}
