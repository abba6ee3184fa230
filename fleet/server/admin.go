package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// maxRenameBody bounds a rename's JSON body.
const maxRenameBody = 4096

// adminHandler is the administration of clusters, below the admin credential middleware.
type adminHandler struct {
	reads *fleetReads
	store store.Store
	log   *slog.Logger
}

// delete is DELETE /api/v1/clusters/{id}: the cluster, its history and its ingest
// tokens go; its agent's next push registers the name afresh (with a new token).
func (h *adminHandler) delete(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.reads.cluster(r, fleetScope)
	if err != nil {
		return err
	}
	if err := h.store.DeleteCluster(r.Context(), c.ID); errors.Is(err, store.ErrNotFound) {
		return errClusterNotFound
	} else if err != nil {
		return err
	}
	h.log.Info("cluster deleted", "id", c.ID, "name", c.Name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rename is PATCH /api/v1/clusters/{id} with {"name": "new"}: history and ingest
// tokens move with it; the agent must push under the new name from then on.
func (h *adminHandler) rename(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.reads.cluster(r, fleetScope)
	if err != nil {
		return err
	}
	var body struct {
		Name string `json:"name"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRenameBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return fail(http.StatusUnprocessableEntity, `want a JSON body {"name": "new-name"}: `+err.Error())
	}
	if err := push.CheckClusterName(body.Name); err != nil {
		return fail(http.StatusUnprocessableEntity, err.Error())
	}
	renamed, err := h.store.RenameCluster(r.Context(), c.ID, body.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errClusterNotFound
	case errors.Is(err, store.ErrConflict):
		return fail(http.StatusConflict, "another cluster is named "+body.Name)
	case err != nil:
		return err
	}
	h.log.Info("cluster renamed", "id", c.ID, "from", c.Name, "to", renamed.Name)
	_, cells, err := h.reads.cluster(r, fleetScope)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.reads.clusterSummary(renamed, cells))
	return nil
}
