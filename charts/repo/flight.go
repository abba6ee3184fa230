package repo

import (
	"context"
	"sync"
)

// flight memoises one result per key for a Reader's life and makes concurrent callers of
// a key share one call. A failure is memoised too, so a repository that is down costs one
// timeout per scan rather than one per release; only a failure caused by the first
// caller's own cancelled context is forgotten, so the next caller tries again.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*call[T]
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
	// forgotten says the call failed on its caller's cancelled context.
	forgotten bool
}

func (f *flight[T]) do(ctx context.Context, key string, fn func() (T, error)) (T, error) {
	for {
		f.mu.Lock()
		if f.calls == nil {
			f.calls = map[string]*call[T]{}
		}
		c, shared := f.calls[key]
		if !shared {
			c = &call[T]{done: make(chan struct{})}
			f.calls[key] = c
		}
		f.mu.Unlock()
		if !shared {
			f.run(ctx, key, c, fn)
			return c.val, c.err
		}
		select {
		case <-c.done:
			if c.forgotten {
				continue // the caller who ran it gave up; try on our own context
			}
			return c.val, c.err
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}

func (f *flight[T]) run(ctx context.Context, key string, c *call[T], fn func() (T, error)) {
	defer close(c.done)
	c.val, c.err = fn()
	if c.err != nil && ctx.Err() != nil {
		c.forgotten = true
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
	}
}
