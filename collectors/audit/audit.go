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
//
// A file is gzip-compressed or not by its first bytes, whatever its name, and is read as
// JSON lines (optionally each after an RFC 3339 timestamp, as CloudWatch exports them) or as
// a JSON document holding records (an array, an EventList, or an object whose events,
// records or entries member holds them), by its first line. A directory is every regular
// file directly in it, by name: kube-apiserver's rotations sort before the log they left.
// Memory does not grow with the logs read (see Aggregator). Collect stops with ctx's error
// when ctx is done.
func Collect(ctx context.Context, o Options) (*inventory.AuditCalls, inventory.Capability, error) {
	if len(o.Paths) == 0 {
		return nil, inventory.Capability{}, errors.New("read audit log: no file, directory or - given")
	}
	r := newReader(ctx, NewAggregator(o.Since), o.Stdin)
	for _, p := range o.Paths {
		if err := r.readPath(p); err != nil {
			return nil, inventory.Capability{}, err
		}
	}
	return r.agg.Section(), r.agg.Capability(), nil
}

// ReadEventList reads one audit.k8s.io/v1 EventList (a webhook batch) of at most limit bytes
// from r into a, as source. A batch past limit, not JSON, or not an EventList is an error
// and changes nothing in a; an item that is not an audit event is counted as malformed.
func (a *Aggregator) ReadEventList(r io.Reader, limit int64, source string) error {
	return a.readEventList(r, limit, source)
}
