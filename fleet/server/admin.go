package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// maxRenameBody bounds a rename's JSON body.
const maxRenameBody = 4096

// deleteCluster is DELETE /api/v1/clusters/{id}: the cluster, its history and its ingest
// tokens go; its agent's next push registers the name afresh (with a new token).
func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request) error {
	c, _, err := s.cluster(r, fleetScope)
	if err != nil {
		return err
	}
	if err := s.store.DeleteCluster(r.Context(), c.ID); errors.Is(err, store.ErrNotFound) {
		return errClusterNotFound
	} else if err != nil {
		return err
	}
	s.log.Info("cluster deleted", "id", c.ID, "name", c.Name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// renameCluster is PATCH /api/v1/clusters/{id} with {"name": "new"}: history and ingest
// tokens move with it; the agent must push under the new name from then on.
func (s *Server) renameCluster(w http.ResponseWriter, r *http.Request) error {
	c, _, err := s.cluster(r, fleetScope)
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
	renamed, err := s.store.RenameCluster(r.Context(), c.ID, body.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errClusterNotFound
	case errors.Is(err, store.ErrConflict):
		return fail(http.StatusConflict, "another cluster is named "+body.Name)
	case err != nil:
		return err
	}
	s.log.Info("cluster renamed", "id", c.ID, "from", c.Name, "to", renamed.Name)
	_, cells, err := s.cluster(r, fleetScope)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.clusterSummary(renamed, cells))
	return nil
}
