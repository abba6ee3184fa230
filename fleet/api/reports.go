package api

import (
	"time"

	"github.com/upgradescope/upgradescope/report"
)

// Where a cluster's report came from (ClusterReport.Source).
const (
	// SourceStored is the stored evaluation of the cluster's latest snapshot.
	SourceStored = "stored"
	// SourceWhatIf is an evaluation made for the read from the latest snapshot and not
	// stored, where none was stored at the target (or, for a team-scoped reader, always:
	// its share is judged now).
	SourceWhatIf = "what-if"
)

// ClusterReport is GET /api/v1/clusters/{id}/report: the cluster's report at one target,
// which it alone holds, and where it came from. Outdated says the stored evaluation is not
// the cluster's judgement now (see Evaluation).
type ClusterReport struct {
	SchemaVersion int            `json:"schemaVersion"`
	ClusterID     int64          `json:"clusterId"`
	ClusterName   string         `json:"clusterName"`
	Target        string         `json:"target"`
	Source        string         `json:"source"`
	SnapshotID    int64          `json:"snapshotId"`
	EvaluatedAt   time.Time      `json:"evaluatedAt"`
	Outdated      bool           `json:"outdated"`
	Report        *report.Report `json:"report"`
}

// ClusterReportSchema is ClusterReport.SchemaVersion.
const ClusterReportSchema = 1
