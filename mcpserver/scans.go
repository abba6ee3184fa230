package mcpserver

import (
	"fmt"
	"sync"

	"github.com/upgradescope/upgradescope/report"
)

// maxScansKept is how many scans list_findings and explain_finding can still read: a few,
// so an assistant comparing two scans finds both, and a long session does not grow.
const maxScansKept = 8

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

// scans keeps the last few scans of every session, by id, oldest dropped first.
type scans struct {
	mu   sync.Mutex
	max  int
	next int
	kept []*scanned
}

func newScans(max int) *scans { return &scans{max: max} }

// add keeps sc under a new id and returns it.
func (s *scans) add(sc *scanned) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	sc.id = fmt.Sprintf("scan-%d", s.next)
	s.kept = append(s.kept, sc)
	if len(s.kept) > s.max {
		s.kept = s.kept[len(s.kept)-s.max:]
	}
	return sc.id
}

// get is the scan id names, "" the latest.
func (s *scans) get(id string) (*scanned, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.kept) == 0 {
		return nil, fmt.Errorf("no scan yet: call scan first")
	}
	if id == "" {
		return s.kept[len(s.kept)-1], nil
	}
	for _, sc := range s.kept {
		if sc.id == id {
			return sc, nil
		}
	}
	return nil, fmt.Errorf("scan %q is not kept (the last %d are): scan again", clip(id, 40), s.max)
}
