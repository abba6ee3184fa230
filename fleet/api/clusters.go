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
	// Standing is where the cluster is counted in the answer's Counts.
	Standing Standing `json:"standing"`
}

// Where a cluster stands at a target: the bucket FleetCounts counts it in.
const (
	StandingReady        = "ready"
	StandingBlocked      = "blocked"
	StandingUnknown      = "unknown"
	StandingAlreadyThere = "already-there"
	StandingNotEvaluated = "not-evaluated"
)

// Standing is one cluster at the counts' target, as the fleet page shows it: Status is one
// of the Standing constants, Target the minor judged (the one asked for, or the cluster's
// next minor; "" when its version is unknown). Blockers, TopBlocker (the highest-ranked:
// most objects, then key) and Teams (who owns the blockers, "(unattributed)" last; with
// none, the teams with namespaces in the cluster) come from its evaluation there; Cause says
// briefly, for an unknown verdict, what was not assessed ("60 probes of kb").
type Standing struct {
	Target     string      `json:"target"`
	Status     string      `json:"status"`
	Blockers   int         `json:"blockers"`
	TopBlocker *FindingRef `json:"topBlocker,omitempty"`
	Teams      []string    `json:"teams,omitempty"`
	Cause      string      `json:"cause,omitempty"`
}

// FindingRef names a finding by key and title.
type FindingRef struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

// FleetCounts counts every cluster a reader sees at one target in exactly one of five
// buckets, so the buckets sum to Clusters: ready, blocked or unknown by its stored
// evaluation there; AlreadyThere when it runs the target or a later minor; NotEvaluated
// when no evaluation is stored there or, at each cluster's next minor, its version is
// unknown. Target "" is each cluster's next minor.
type FleetCounts struct {
	Target       string `json:"target"`
	Clusters     int    `json:"clusters"`
	Ready        int    `json:"ready"`
	Blocked      int    `json:"blocked"`
	Unknown      int    `json:"unknown"`
	AlreadyThere int    `json:"alreadyThere"`
	NotEvaluated int    `json:"notEvaluated"`
}

// FleetFindings is GET /api/v1/fleet/findings: each finding key once across the clusters
// the reader sees at a target, most clusters blocked first.
type FleetFindings struct {
	Target      string         `json:"target"`
	GeneratedAt time.Time      `json:"generatedAt"`
	Counts      FleetCounts    `json:"counts"`
	Findings    []FleetFinding `json:"findings"`
	// Unreadable names the clusters whose stored report at the target could not be read:
	// their findings are missing here, which the reader is told rather than left to guess.
	Unreadable []string `json:"unreadable"`
	// Bundles are the set the server judges with, read with the findings, as Fleet's.
	Bundles []Bundle `json:"bundles"`
}

// FleetFinding is one finding key across the fleet: Severity is the worst any cluster has
// it at, Title the first cluster's (by name; a title may count objects), Teams and Objects
// the union and sum over Clusters.
type FleetFinding struct {
	Key             string           `json:"key"`
	Title           string           `json:"title"`
	Category        string           `json:"category"`
	Severity        string           `json:"severity"`
	ClustersBlocked int              `json:"clustersBlocked"`
	Objects         int              `json:"objects"`
	Teams           []string         `json:"teams"`
	Clusters        []FindingCluster `json:"clusters"`
}

// FindingCluster is one cluster a fleet finding affects: blocks (severity blocker) or warns.
type FindingCluster struct {
	ClusterID     int64    `json:"clusterId"`
	Name          string   `json:"name"`
	ServerVersion string   `json:"serverVersion"`
	Target        string   `json:"target"`
	Severity      string   `json:"severity"`
	Objects       int      `json:"objects"`
	Teams         []string `json:"teams"`
}

// Fleet is GET /api/v1/fleet: the clusters the reader sees by name, each with a cell per
// target of Targets, and Counts, every cluster where it stands at the ?target= asked for
// (each cluster's next minor when none was). Clusters is never null.
type Fleet struct {
	Targets     []string   `json:"targets"`
	GeneratedAt time.Time  `json:"generatedAt"`
	Clusters    []FleetRow `json:"clusters"`
	// Bundles are the set the server evaluates with now, by name: a stored evaluation made
	// with another set is outdated until the background re-evaluation reaches it.
	Bundles      []Bundle     `json:"bundles"`
	Reevaluation Reevaluation `json:"reevaluation"`
	Counts       FleetCounts  `json:"counts"`
}

// Bundle is a bundle the server evaluates with, by name and revision.
type Bundle struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

// Reevaluation is the background re-evaluation's progress: Pending counts the clusters in
// scope whose latest snapshot is not yet judged with the current set, today (UTC), at every
// target it is planned at.
type Reevaluation struct {
	Pending int `json:"pending"`
}
