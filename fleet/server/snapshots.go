package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// snapshots reads back what the store keeps of pushes: inventories and reports, each
// bounded by the push size (maxBytes, Config.MaxSnapshotBytes). An inventory is read back
// as the server judges it: with the cluster's audit webhook section (withAudit).
type snapshots struct {
	store    store.Store
	admit    *admission.Turns
	maxBytes int
	log      *slog.Logger
	// auditLogged holds the clusters whose unreadable audit state was logged.
	auditLogged sync.Map
}

// latest reads the cluster's latest snapshot back.
func (sn *snapshots) latest(ctx context.Context, c store.Cluster) (*inventory.Document, int64, error) {
	snap, err := sn.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fail(http.StatusNotFound, "the cluster has no snapshot yet")
	} else if err != nil {
		return nil, 0, err
	}
	doc, err := sn.decode(ctx, snap)
	return doc, snap.ID, err
}

// report decodes a stored evaluation's report.
func (sn *snapshots) report(ev store.EvaluationRecord) (*report.Report, error) {
	var rep report.Report
	if err := gunzipJSON(ev.Report, 4*sn.maxBytes, &rep); err != nil {
		return nil, fmt.Errorf("read stored report %d: %w", ev.ID, err)
	}
	return &rep, nil
}

// decode reads a stored snapshot's inventory back, with its cluster's audit section
// (withAudit): the gzip of the push's envelope
// (readPush), or, as servers before it stored it, of the inventory alone. An inventory has
// no "inventory" member (the schema closes its top level), so the member tells them apart.
// The member is read as push.DecodeJSON read it, so that of an envelope naming it twice the
// last is read, as it was validated: decoded straight into a Document the copies would merge.
//
// The inventory was accepted by inventory.Parse when it was pushed, so it is decoded with
// inventory.DecodeStored, Parse's json/v2 decode without its acceptor's pass (with the
// envelope's split, about half of the two encoding/json passes it took before): a dry run
// reads every cluster's. A schema grown stricter since does not make a stored snapshot
// unreadable.
func (sn *snapshots) decode(ctx context.Context, snap store.SnapshotRecord) (*inventory.Document, error) {
	plain, release, err := sn.inflate(snap)
	if err != nil {
		return nil, err
	}
	defer release()
	doc, err := decodeSnapshot(snap.ID, plain)
	if err != nil {
		return nil, err
	}
	return sn.withAudit(ctx, snap.ClusterID, doc)
}

// decodeInBackground is decode for the background re-evaluation, the dry run and the
// rehearsal: the decode waits for its share of the budget pushes decode in (admission,
// rule 2).
func (sn *snapshots) decodeInBackground(ctx context.Context, snap store.SnapshotRecord) (*inventory.Document, error) {
	plain, release, err := sn.inflate(snap)
	if err != nil {
		return nil, err
	}
	defer release()
	turn, err := sn.admit.DecodeInBackground(ctx, len(plain))
	if err != nil {
		return nil, err
	}
	doc, err := decodeSnapshot(snap.ID, plain)
	turn()
	if err != nil {
		return nil, err
	}
	return sn.withAudit(ctx, snap.ClusterID, doc)
}

// inflate inflates a stored snapshot into a pooled buffer, valid until release.
func (sn *snapshots) inflate(snap store.SnapshotRecord) (plain []byte, release func(), err error) {
	plain, release, err = inflatePooled(snap.Inventory, sn.maxBytes*2)
	if err != nil {
		return nil, nil, fmt.Errorf("read snapshot %d: %w", snap.ID, err)
	}
	return plain, release, nil
}

func decodeSnapshot(id int64, plain []byte) (*inventory.Document, error) {
	// A stored envelope is one the server accepted: its inventory is decoded where it
	// stands, in one json/v2 pass, as inventory.DecodeStored decodes it alone. Anything v2
	// refuses takes the path below, which splits the envelope first.
	var env struct {
		Inventory *inventory.Document `json:"inventory"`
	}
	if err := jsonv2.Unmarshal(plain, &env); err == nil && env.Inventory != nil {
		return env.Inventory, nil
	}
	raw, err := push.InventoryJSON(plain)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %d: %w", id, err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = plain
	}
	doc, err := inventory.DecodeStored(raw)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %d: %w", id, err)
	}
	return doc, nil
}
