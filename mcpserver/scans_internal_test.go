package mcpserver

import (
	"context"
	"fmt"
	"testing"
)

// A session keeps its last few scans and the server its last many: a session past its
// bound loses its own oldest, and sessions past the bound in all lose the oldest of anyone's.
func TestScansKeepEachSessionsLastFewAndTheLastManyInAll(t *testing.T) {
	s := newScans(maxScansKept)
	in := func(session string) context.Context { return withSession(context.Background(), session) }
	add := func(session string, n int) (ids []string) {
		for range n {
			ids = append(ids, s.add(in(session), &scanned{}))
		}
		return ids
	}
	kept := func(session string, ids []string) (n int) {
		for _, id := range ids {
			if _, err := s.get(in(session), id); err == nil {
				n++
			}
		}
		return n
	}
	early := add("early", maxScansKept+2)
	if n := kept("early", early[:2]); n != 0 {
		t.Errorf("%d of a session's first two scans kept after %d more: want its oldest dropped", n, maxScansKept)
	}
	if n := kept("early", early[2:]); n != maxScansKept {
		t.Errorf("%d of a session's last %d scans kept, want all", n, maxScansKept)
	}
	var later []string
	for i := range maxScansInAll / maxScansKept {
		later = append(later, add(fmt.Sprint("later-", i), maxScansKept)...)
	}
	if n := kept("early", early); n != 0 {
		t.Errorf("%d of the first session's scans kept after %d of others: want the oldest of anyone's dropped past %d in all",
			n, len(later), maxScansInAll)
	}
	for i := range maxScansInAll / maxScansKept {
		session := fmt.Sprint("later-", i)
		if n := kept(session, later[i*maxScansKept:(i+1)*maxScansKept]); n != maxScansKept {
			t.Errorf("%s: %d of its %d scans kept, want all: %d are kept in all", session, n, maxScansKept, maxScansInAll)
		}
	}
	if sc, err := s.get(in("later-0"), ""); err != nil || sc.id != later[maxScansKept-1] {
		t.Errorf("a session's latest scan is %v (%v), want its last, %s", sc, err, later[maxScansKept-1])
	}
	if _, err := s.get(in("later-1"), later[0]); err == nil {
		t.Errorf("a session read another's scan %s by its id", later[0])
	}
}
