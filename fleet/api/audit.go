package api

// AuditPath is where the API server's audit webhook backend posts a cluster's batches:
// the cluster's name follows it (POST /api/v1/audit/{name}).
const AuditPath = "/api/v1/audit/"

// AuditAccepted is POST /api/v1/audit/{name}'s answer to a batch it counted: its audit
// events counted, its items that were not one (Malformed: counted apart and skipped), and the
// batches the cluster's section has counted so far.
type AuditAccepted struct {
	ClusterID int64 `json:"clusterId"`
	Events    int64 `json:"events"`
	Malformed int64 `json:"malformed"`
	Batches   int64 `json:"batches"`
}
