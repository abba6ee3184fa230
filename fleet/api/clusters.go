package api

import (
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// Evaluation is a stored evaluation of a cluster at one target. Outdated says it is not
// the cluster's judgement now: another bundle set made it, a newer snapshot was not yet
// judged at its target, or it was made on an earlier UTC day.
type Evaluation struct {
	Target      string    `json:"target"`
	Verdict     string    `json:"verdict"`
	Score       int       `json:"score"`
	Ready       bool      `json:"ready"`
	Blockers    int       `json:"blockers"`
	Warnings    int       `json:"warnings"`
	EvaluatedAt time.Time `json:"evaluatedAt"`
	SnapshotID  int64     `json:"snapshotId"`
	Outdated    bool      `json:"outdated"`
}

// Cluster is a cluster as GET /api/v1/clusters lists it (each under "clusters") and as
// PATCH /api/v1/clusters/{id} answers it renamed. Latest is its evaluation at
// DefaultTarget, null when there is none.
type Cluster struct {
	ID               int64       `json:"id"`
	Name             string      `json:"name"`
	ClusterUID       string      `json:"clusterUid"`
	FirstSeen        time.Time   `json:"firstSeen"`
	LastSeen         time.Time   `json:"lastSeen"`
	ServerVersion    string      `json:"serverVersion"`
	Stale            bool        `json:"stale"`
	LatestSnapshotID int64       `json:"latestSnapshotId"`
	DefaultTarget    string      `json:"defaultTarget"`
	Latest           *Evaluation `json:"latest"`
	// Bundles are those its agent last said it evaluates with.
	Bundles []AgentBundle `json:"bundles"`
}

// ClusterList is GET /api/v1/clusters' answer. Clusters is never null: a client tells an
// answer without it from another service's.
type ClusterList struct {
	Clusters []Cluster `json:"clusters"`
}

// AgentBundle is a bundle a cluster's agent evaluates with. Behind is set when the server
// evaluates with another revision of a bundle of that name: the agent has not picked up
// what the server has (or runs one the server has not been given yet).
type AgentBundle struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
	Behind   bool   `json:"behind"`
}

// ClusterDetail is GET /api/v1/clusters/{id}: the cluster, the targets it is judged at, its
// evaluations by target minor, and its latest snapshot (null before the first).
type ClusterDetail struct {
	Cluster
	Targets     []string      `json:"targets"`
	Evaluations []*Evaluation `json:"evaluations"`
	Snapshot    *Snapshot     `json:"snapshot"`
}

// Snapshot is a cluster's latest snapshot as its detail shows it. A team-scoped reader is
// told which capabilities were missing or partial, not why.
type Snapshot struct {
	ID            int64                           `json:"id"`
	ReceivedAt    time.Time                       `json:"receivedAt"`
	CollectedAt   *time.Time                      `json:"collectedAt"`
	AgentVersion  string                          `json:"agentVersion"`
	KBVersion     string                          `json:"kbVersion"`
	ServerVersion string                          `json:"serverVersion"`
	Capabilities  map[string]inventory.Capability `json:"capabilities"`
}

// Rename is PATCH /api/v1/clusters/{id}'s body.
type Rename struct {
	Name string `json:"name"`
}

// FleetRow is one cluster of GET /api/v1/fleet's matrix: a cell per target, null where
// there is no evaluation or the cluster already runs the target (then also listed in
// NotApplicable).
type FleetRow struct {
	ClusterID     int64                  `json:"clusterId"`
	Name          string                 `json:"name"`
	LastSeen      time.Time              `json:"lastSeen"`
	Stale         bool                   `json:"stale"`
	ServerVersion string                 `json:"serverVersion"`
	Cells         map[string]*Evaluation `json:"cells"`
	NotApplicable []string               `json:"notApplicable"`
	Bundles       []AgentBundle          `json:"bundles"`
}
