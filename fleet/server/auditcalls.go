package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/inventory"
)

// maxAuditStateBytes bounds a stored state decompressed. The state is bounded by
// construction (inventory.MaxAuditTracked callers, their strings within the aggregator's
// 64 MiB): a realistic one is a few megabytes, and this leaves room for a hostile log's
// strings escaped in JSON. A state past it reads as unreadable (unreadableAudit).
const maxAuditStateBytes = 128 << 20

// unreadableAudit is the capability of a cluster whose stored audit state cannot be read:
// it is judged without it, as a cluster whose agent read no audit log is.
var unreadableAudit = inventory.Capability{Reason: "the stored audit section could not be read"}

// decodeAuditState reads a stored aggregation state back; nil for none.
func decodeAuditState(stored []byte) (*audit.State, error) {
	if len(stored) == 0 {
		return nil, nil
	}
	var s audit.State
	if err := gunzipJSON(stored, maxAuditStateBytes, &s); err != nil {
		return nil, fmt.Errorf("read the stored audit calls: %w", err)
	}
	return &s, nil
}

// withAudit is doc as the server judges it: with the section the cluster's audit webhook
// batches built, when doc has none of its own (its agent read no audit log), under the
// capability audit-log the aggregation answers (partial when malformed events were skipped
// or callers were only counted per API). Every stored snapshot is read through it
// (snapshots.decode), and every push judged with it, so that no view judges a cluster
// without its section. The window starts audit.DefaultSince before doc was collected, so a
// snapshot and a section always judge alike, and a caller last seen before it is an old
// one; a snapshot without a collection time keeps the whole window (the rules then call
// none old: never a guess that a caller stopped). A state that cannot be read is left out
// under an unavailable capability, logged once per cluster: an optional capability never
// stops judging. doc itself is not changed: the copy shares everything but the
// capabilities and the section.
func (sn *snapshots) withAudit(ctx context.Context, clusterID int64, doc *inventory.Document) (*inventory.Document, error) {
	if clusterID == 0 || doc.AuditCalls != nil {
		return doc, nil
	}
	rec, err := sn.store.AuditCalls(ctx, clusterID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return doc, nil
	case err != nil:
		return nil, err
	}
	state, err := decodeAuditState(rec.Section)
	if err == nil && state == nil {
		return doc, nil
	}
	out := *doc
	out.Capabilities = maps.Clone(doc.Capabilities)
	if out.Capabilities == nil {
		out.Capabilities = map[string]inventory.Capability{}
	}
	if err != nil {
		sn.unreadable(clusterID, err)
		out.Capabilities[inventory.CapAuditLog] = unreadableAudit
		return &out, nil
	}
	var since time.Time
	if !doc.CollectedAt.IsZero() {
		since = doc.CollectedAt.Add(-audit.DefaultSince)
	}
	agg := audit.ResumeState(state, since)
	out.Capabilities[inventory.CapAuditLog] = agg.Capability()
	out.AuditCalls = agg.Section()
	return &out, nil
}

// unreadable logs, once per cluster while the server runs, that its stored audit state
// cannot be read.
func (sn *snapshots) unreadable(clusterID int64, err error) {
	if _, logged := sn.auditLogged.LoadOrStore(clusterID, true); logged || sn.log == nil {
		return
	}
	sn.log.Warn("the cluster's stored audit section could not be read: it is judged without it until its next webhook batch replaces it",
		"clusterId", clusterID, "err", err)
}

// newInState answers whether after names a caller, an API of the callers not tracked, or a
// kubectl version that before does not: something a rule may judge that it has not judged
// yet. A count that grew is not: the next push, or the next new caller, carries it.
func newInState(before, after *audit.State) bool {
	if after == nil {
		return false
	}
	if before == nil {
		return len(after.Callers)+len(after.Omitted)+len(after.Kubectl) > 0
	}
	seen := map[string]bool{}
	for _, c := range before.Callers {
		seen[callerKey(c)] = true
	}
	for _, o := range before.Omitted {
		seen[apiKey(o.Group, o.Version, o.Resource, o.Subresource)] = true
	}
	for _, k := range before.Kubectl {
		seen["kubectl\x00"+k.Version] = true
	}
	for _, c := range after.Callers {
		if !seen[callerKey(c)] {
			return true
		}
	}
	for _, o := range after.Omitted {
		if !seen[apiKey(o.Group, o.Version, o.Resource, o.Subresource)] {
			return true
		}
	}
	for _, k := range after.Kubectl {
		if !seen["kubectl\x00"+k.Version] {
			return true
		}
	}
	return false
}

// callerKey is what tells one caller from another: the API and the verb, who, and with
// which user agent (inventory.AuditCaller).
func callerKey(c inventory.AuditCaller) string {
	return apiKey(c.Group, c.Version, c.Resource, c.Subresource) + "\x00" + c.Verb + "\x00" + c.User + "\x00" + c.UserAgent
}

func apiKey(group, version, resource, subresource string) string {
	return "api\x00" + group + "\x00" + version + "\x00" + resource + "\x00" + subresource
}

// auditCalls is the share of an audit section: the callers that are service accounts of
// namespaces the share holds. Who else calls (people, other teams' service accounts, the
// kubectl users) is not a team-scoped reader's to know; the share is never judged ready
// anyway (othersGap), so what is left out cannot make it read ready.
func (sh share) auditCalls(s *inventory.AuditCalls) *inventory.AuditCalls {
	if s == nil {
		return nil
	}
	out := *s
	out.Callers = keep(s.Callers, func(c inventory.AuditCaller) bool {
		ns, _, ok := strings.Cut(c.ServiceAccount, "/")
		return ok && sh.visible(ns)
	})
	out.Omitted, out.OmittedAPIs, out.Kubectl, out.KubectlOmitted, out.MalformedAt = nil, 0, nil, 0, nil
	return &out
}

// fillAudit adds the cluster's audit webhook section to its page as it is stored now. A
// team-scoped reader is told there is one, not shown it: it names people and every team's
// service accounts.
func (h *dashboardHandler) fillAudit(ctx context.Context, c store.Cluster, sc scope, view *web.Cluster) error {
	rec, err := h.reads.store.AuditCalls(ctx, c.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	panel := &web.AuditPanel{Batches: rec.Batches, FirstBatch: rec.FirstBatch, LastBatch: rec.LastBatch, Withheld: !sc.fleet}
	if sc.fleet {
		state, err := decodeAuditState(rec.Section)
		if err != nil {
			h.reads.snaps.unreadable(c.ID, err)
			panel.Unreadable = true
		} else if state != nil {
			panel.Section = audit.ResumeState(state, time.Time{}).Section()
		}
	}
	view.Audit = panel
	return nil
}
