package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"sync"
)

const (
	qTryAdvisoryLock = `SELECT pg_try_advisory_lock($1)`
	qAdvisoryUnlock  = `SELECT pg_advisory_unlock($1)`
)

func (s *sqlStore) WithLock(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	if !s.d.advisoryLocks {
		return s.locks.with(ctx, name, fn)
	}
	return s.withAdvisoryLock(ctx, name, fn)
}

// withAdvisoryLock holds a session advisory lock on a connection of its own while fn
// runs: the lock belongs to the session, so it is taken and released on that connection,
// and a replica that dies while holding it frees it with its session. fn's error is
// answered as fn gave it.
func (s *sqlStore) withAdvisoryLock(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	key := lockKey(name)
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("lock %q: connect: %w", name, s.classify(err))
	}
	defer conn.Close()
	var got bool
	if err := conn.QueryRowContext(ctx, qTryAdvisoryLock, key).Scan(&got); err != nil {
		return false, fmt.Errorf("lock %q: %w", name, s.classify(err))
	}
	if !got {
		return false, nil
	}
	defer func() {
		// A connection whose unlock failed may still hold the lock: it must not go back
		// to the pool, where the lock would outlive fn; closing it ends the session.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), qAdvisoryUnlock, key); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return true, fn(ctx)
}

// lockKey is name's advisory lock key: 64 bits of FNV-1a, stable across servers and
// Postgres versions (hashtext is not documented as either), under a prefix of our own.
func lockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("upgradescope:lock:" + name))
	return int64(h.Sum64())
}

// localLocks are WithLock's locks on a SQLite handle: a SQLite file is served by one
// process, so a lock held in that process's memory is the whole database's.
type localLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *localLocks) with(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error) {
	if !l.take(name) {
		return false, nil
	}
	defer l.release(name)
	return true, fn(ctx)
}

func (l *localLocks) take(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return false
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[name] = true
	return true
}

func (l *localLocks) release(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held, name)
}
