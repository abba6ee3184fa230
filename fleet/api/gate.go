package api

import "encoding/json"

// Content types of a gate's body besides manifests (YAML or JSON).
const (
	// InventoryContentType marks a body that is an inventory document, not manifests.
	InventoryContentType = "application/vnd.upgradescope.inventory+json"
	// GateContentType marks a GateRequest: what `upgradescope gate` sends, so a
	// suppression file travels in the body, never in a URL a proxy logs or cuts.
	GateContentType = "application/vnd.upgradescope.gate+json"
)

// MaxGateConfig bounds GateRequest.Config, an .upgradescope.yaml of ignore rules.
const MaxGateConfig = 32 << 10

// GateRequest is a POST /api/v1/gate body of GateContentType: an inventory and the
// suppression file to judge it with ("" for none: the query's config, if any, applies).
type GateRequest struct {
	Inventory json.RawMessage `json:"inventory"`
	Config    string          `json:"config,omitempty"`
}
