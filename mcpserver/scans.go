package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/upgradescope/upgradescope/report"
)

// What a session keeps is its own: over --http each client has an MCP session of its own,
// and one client's scans and dry runs are no other's to read. Ids stay unique across the
// server (scan-7 is one scan), so what is cached by id (explain's fix plans) is never
// another session's.
const (
	// maxScansKept is how many scans of a session list_findings and explain_finding can
	// still read: a few, so an assistant comparing two scans finds both, and a long session
	// does not grow.
	maxScansKept = 8
	// maxScansInAll bounds the scans kept over every session: many clients cannot grow
	// the server either.
	maxScansInAll = 64
)

// sessionKey is the context key of the MCP session a tool call came in on.
type sessionKey struct{}

// withSession is ctx of a tool call on the MCP session id ("" on stdio, which has one).
func withSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// sessionOf is the MCP session a tool call came in on, as withSession put it.
func sessionOf(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// scanned is one scan's report, kept for the tools that read it after scan answered.
type scanned struct {
	id     string
	source string
	// files is the directory or file a files scan read (absolute, under the root), for
	// explain_finding to show what fix would change; "" for an inventory or the cluster.
	files string
	// beside is where the suppression file is looked for first (FindIgnore): the directory
	// of what was read, "" for the cluster.
	beside string
	// suppressions names the ignore file applied, "" when none was.
	suppressions string
	rep          *report.Report
}

func (sc *scanned) keptAs(id string) { sc.id = id }

// scans keeps the last scans of every session by id.
type scans struct {
	kept   lastKept[*scanned]
	bounds keepBounds
}

func newScans(perSession int) *scans {
	return &scans{bounds: keepBounds{prefix: "scan", perSession: perSession, all: maxScansInAll}}
}

// add keeps sc as the latest scan of ctx's session, under a new id it returns.
func (s *scans) add(ctx context.Context, sc *scanned) string { return s.kept.add(ctx, sc, s.bounds) }

// get is the scan of ctx's session id names, "" its latest.
func (s *scans) get(ctx context.Context, id string) (*scanned, error) {
	if sc, ok := s.kept.get(ctx, id); ok {
		return sc, nil
	}
	if id == "" {
		return nil, fmt.Errorf("no scan yet: call scan first")
	}
	return nil, fmt.Errorf("scan %q is not kept in this session (its last %d are): scan again", clip(id, 40), s.bounds.perSession)
}

// keepBounds are how many values a lastKept holds and what it names them.
type keepBounds struct {
	prefix          string // ids are prefix-1, prefix-2, …
	perSession, all int
}

// keepable is a value a lastKept keeps, told the id it is kept under.
type keepable interface{ keptAs(id string) }

// lastKept keeps the last values of every session, each under an id unique across
// sessions, oldest dropped first: a session's own past its bound, anyone's past the bound
// in all. The zero value is empty and ready.
type lastKept[T keepable] struct {
	mu   sync.Mutex
	next int
	kept []keptValue[T] // oldest first
}

type keptValue[T keepable] struct {
	session, id string
	v           T
}

// add keeps v for ctx's session under a new id, tells v the id and returns it.
func (k *lastKept[T]) add(ctx context.Context, v T, b keepBounds) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.next++
	id := fmt.Sprintf("%s-%d", b.prefix, k.next)
	v.keptAs(id)
	session := sessionOf(ctx)
	k.kept = append(k.kept, keptValue[T]{session: session, id: id, v: v})
	for k.count(session) > b.perSession {
		k.drop(func(kv keptValue[T]) bool { return kv.session == session })
	}
	for len(k.kept) > b.all {
		k.drop(func(keptValue[T]) bool { return true })
	}
	return id
}

// get is the value of ctx's session kept under id, "" its latest.
func (k *lastKept[T]) get(ctx context.Context, id string) (T, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	session := sessionOf(ctx)
	for i := len(k.kept) - 1; i >= 0; i-- {
		if kv := k.kept[i]; kv.session == session && (id == "" || kv.id == id) {
			return kv.v, true
		}
	}
	var zero T
	return zero, false
}

func (k *lastKept[T]) count(session string) int {
	n := 0
	for _, kv := range k.kept {
		if kv.session == session {
			n++
		}
	}
	return n
}

// drop forgets the oldest value that which picks.
func (k *lastKept[T]) drop(which func(keptValue[T]) bool) {
	for i, kv := range k.kept {
		if which(kv) {
			k.kept = slices.Delete(k.kept, i, i+1)
			return
		}
	}
}
