package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/inventory"
)

// maxAuditSectionBytes bounds a stored section decompressed. The section is bounded by
// construction (inventory.MaxAuditCallers callers and the other bounds of the section, each
// string at most inventory.MaxStringLength): a realistic one is a few hundred kilobytes,
// and this is far past the largest a batch can build.
const maxAuditSectionBytes = 64 << 20

// decodeAuditSection reads a stored section back; nil for none.
func decodeAuditSection(stored []byte) (*inventory.AuditCalls, error) {
	if len(stored) == 0 {
		return nil, nil
	}
	var s inventory.AuditCalls
	if err := gunzipJSON(stored, maxAuditSectionBytes, &s); err != nil {
		return nil, fmt.Errorf("read the stored audit calls: %w", err)
	}
	return &s, nil
}

// withAudit is doc as the server judges it: with the section the cluster's audit webhook
// batches built, when doc has none of its own (its agent read no audit log), under the
// capability audit-log. The window starts audit.DefaultSince before doc was collected,
// so a snapshot and a section always judge alike, and a caller last seen before it is an
// old one; a snapshot without a collection time keeps the stored window, which holds every
// call (the rules then call none old: never a guess that a caller stopped). doc itself is
// not changed: the copy shares everything but the capabilities and the section.
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
	section, err := decodeAuditSection(rec.Section)
	if err != nil {
		return nil, fmt.Errorf("cluster %d: %w", clusterID, err)
	}
	if section == nil {
		return doc, nil
	}
	if !doc.CollectedAt.IsZero() {
		section.Since = doc.CollectedAt.Add(-audit.DefaultSince).UTC().Format(inventory.AuditTime)
	}
	out := *doc
	out.Capabilities = maps.Clone(doc.Capabilities)
	if out.Capabilities == nil {
		out.Capabilities = map[string]inventory.Capability{}
	}
	out.Capabilities[inventory.CapAuditLog] = inventory.Capability{Available: true}
	out.AuditCalls = section
	return &out, nil
}

// newInSection answers whether after names a caller, an API past the callers listed, or a
// kubectl version that before does not: something a rule may judge that it has not judged
// yet. A count that grew is not: the next push, or the next new caller, carries it.
func newInSection(before, after *inventory.AuditCalls) bool {
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
		if panel.Section, err = decodeAuditSection(rec.Section); err != nil {
			return err
		}
	}
	view.Audit = panel
	return nil
}
