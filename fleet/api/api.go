// Package api is the fleet server's wire format: the JSON bodies its API answers and the
// request bodies and headers it reads, declared once for the server (fleet/server), which
// writes them, and its clients (fleet/client, the CLI, upgradescope mcp), which read them.
// docs/openapi.yaml publishes the same shapes; the server's contract tests hold the two
// together. The package holds declarations only and links no evaluator.
package api

// ErrorBody is every error answer's body: {"error": "<message users read>"}.
type ErrorBody struct {
	Error string `json:"error"`
}

// Headers the gate answers with: the verdict at the target, and with ?cluster= the
// verdict of the manifests applied to the stored cluster.
const (
	VerdictHeader        = "X-Upgradescope-Verdict"
	ClusterVerdictHeader = "X-Upgradescope-Cluster-Verdict"
)
