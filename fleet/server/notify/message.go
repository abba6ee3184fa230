// Package notify tells people when a cluster's readiness changes: it compares a new
// evaluation with the target's baseline (Compare), builds the webhook v1 body (NewBody),
// and delivers queued messages to Slack and generic webhooks from the store's outbox
// (Worker), with retries, holds and at-least-once delivery.
//
// The package decides nothing about storage: the server enqueues a message in the ingest's
// transaction, and the Worker drains what the store hands it.
package notify

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"slices"
	"time"
)

// Kinds of change, in the order a body lists them.
const (
	KindNewBlocker     = "new-blocker"
	KindBecameReady    = "became-ready"
	KindEOLApproaching = "eol-approaching"
)

// EventType is the only event a v1 body carries.
const EventType = "readiness.changed"

// MaxPerKind bounds the changes of one kind in a body; the rest are counted in Omitted.
const MaxPerKind = 5

// Body is the webhook v1 body (docs/webhook.schema.json): one per cluster per evaluation
// pass that changed something.
type Body struct {
	SchemaVersion int            `json:"schemaVersion"`
	DeliveryID    string         `json:"deliveryId"`
	Type          string         `json:"type"`
	Timestamp     string         `json:"timestamp"`
	Cluster       Cluster        `json:"cluster"`
	Targets       []Target       `json:"targets"`
	Changes       []Change       `json:"changes"`
	Omitted       map[string]int `json:"omitted,omitempty"`
}

// Cluster names the cluster a body is about: its server id and name, and its page in the
// dashboard at the body's first change's first target when the server knows its public URL
// (the page alone would open at the cluster's next minor, which may not be the one that
// changed).
type Cluster struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Target is one target's new judgement.
type Target struct {
	Target   string `json:"target"`
	Verdict  string `json:"verdict"`
	Score    int    `json:"score"`
	Blockers int    `json:"blockers"`
}

// Change is one thing that changed, at every target it changed at.
type Change struct {
	Kind     string   `json:"kind"`
	Key      string   `json:"key,omitempty"`
	Severity string   `json:"severity"`
	Title    string   `json:"title"`
	Detail   string   `json:"detail,omitempty"`
	Targets  []string `json:"targets"`
	// Teams own the finding (its namespaces' teams), sorted; none for a finding no team
	// owns and for became-ready.
	Teams []string `json:"teams,omitempty"`
	// URL opens the cluster's dashboard page at the change's first target with its finding
	// open (the cluster at that target for became-ready); "" without a public URL.
	URL string `json:"url,omitempty"`
}

// same: one change by its key, or by its title when it has no key (a title may count
// objects, which differ between targets; a key never does).
func (c Change) same(o Change) bool {
	if c.Key != "" || o.Key != "" {
		return c.Key == o.Key
	}
	return c.Title == o.Title
}

// TargetDelta is what Compare found at one target, with that target's judgement.
type TargetDelta struct {
	Target
	Changes []Change
}

// NewBody merges the deltas of one pass (targets in ascending order) into a body, or
// answers nil when nothing changed. A change found at several targets is listed once with
// all of them; each kind keeps its first MaxPerKind changes. page is the cluster's
// dashboard page, which the body links at its targets (Cluster.URL, Change.URL), or "" for
// no links.
func NewBody(cluster Cluster, page string, deltas []TargetDelta, now time.Time) *Body {
	b := &Body{SchemaVersion: 1, DeliveryID: newDeliveryID(), Type: EventType,
		Timestamp: now.UTC().Format(time.RFC3339), Cluster: cluster, Targets: []Target{}}
	var all []Change
	for _, d := range deltas {
		b.Targets = append(b.Targets, d.Target)
		for _, c := range d.Changes {
			i := slices.IndexFunc(all, func(o Change) bool { return o.Kind == c.Kind && o.same(c) })
			if i < 0 {
				all = append(all, c)
				continue
			}
			all[i].Targets = append(all[i].Targets, c.Targets...)
			all[i].Teams = union(all[i].Teams, c.Teams)
		}
	}
	if len(all) == 0 {
		return nil
	}
	b.Changes, b.Omitted = capPerKind(all)
	b.link(page)
	return b
}

// link points the body at the cluster's page: the cluster at its first change's first
// target (changes come most pressing first), each change at its own first target with its
// finding open (the page's ?finding=).
func (b *Body) link(page string) {
	if page == "" {
		return
	}
	b.Cluster.URL = pageAt(page, b.Changes[0].Targets[0], "")
	for i := range b.Changes {
		b.Changes[i].URL = pageAt(page, b.Changes[i].Targets[0], b.Changes[i].Key)
	}
}

// pageAt is the cluster's page at target, with the finding key open when there is one.
func pageAt(page, target, key string) string {
	u := page + "?target=" + url.QueryEscape(target)
	if key != "" {
		u += "&finding=" + url.QueryEscape(key)
	}
	return u
}

// capPerKind orders changes by kind (stable within one) and keeps MaxPerKind of each.
func capPerKind(all []Change) ([]Change, map[string]int) {
	out := []Change{}
	var omitted map[string]int
	for _, kind := range []string{KindNewBlocker, KindBecameReady, KindEOLApproaching} {
		n := 0
		for _, c := range all {
			if c.Kind != kind {
				continue
			}
			if n++; n <= MaxPerKind {
				out = append(out, c)
				continue
			}
			if omitted == nil {
				omitted = map[string]int{}
			}
			omitted[kind]++
		}
	}
	return out, omitted
}

// union is the sorted teams of a and b, each once.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// newDeliveryID is 32 random hex digits: the receiver's deduplication key.
func newDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
