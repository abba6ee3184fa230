// Package audit reads the API server's audit events (audit.k8s.io/v1 Event) and aggregates
// the requests to deprecated APIs per caller into the inventory's auditCalls section: from
// log files (JSON lines, rotated, gzip-compressed, or the managed providers' export shapes)
// as a stream in bounded memory, and from the webhook backend's EventList batches.
package audit

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// DefaultSince is how far back the window reaches by default: 30 days, as GKE's deprecation
// insights report.
const DefaultSince = 30 * 24 * time.Hour

// Options are what Collect reads.
type Options struct {
	// Paths are files, directories (every regular file in them: a log and its rotations)
	// and "-" for Stdin.
	Paths []string
	Stdin io.Reader
	// Since is the start of the window.
	Since time.Time
}

// Collect reads every path and returns the section and its capability. An error is a path
// that cannot be read at all; a malformed line is counted in the section, never fatal.
func Collect(ctx context.Context, o Options) (*inventory.AuditCalls, inventory.Capability, error) {
	return nil, inventory.Capability{}, errors.New("audit: not implemented yet")
}

// Aggregator counts events per caller within bounds (inventory.MaxAuditTracked and the
// section's bounds).
type Aggregator struct{}

// NewAggregator starts an empty aggregation whose window starts at since.
func NewAggregator(since time.Time) *Aggregator { return &Aggregator{} }

// Resume continues counting into a section an earlier aggregation produced (the server's,
// across webhook batches), with the window starting at since.
func Resume(s *inventory.AuditCalls, since time.Time) *Aggregator { return &Aggregator{} }

// ReadEventList reads one audit.k8s.io/v1 EventList (a webhook batch) of at most limit bytes
// from r into a, as source.
func (a *Aggregator) ReadEventList(r io.Reader, limit int64, source string) error {
	return errors.New("audit: not implemented yet")
}

// Section is the aggregation so far, within the section's bounds, in a deterministic order.
func (a *Aggregator) Section() *inventory.AuditCalls { return &inventory.AuditCalls{} }
