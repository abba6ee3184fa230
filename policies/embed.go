// Package policies embeds the built-in rule packs and knowledge base: an ordinary OPA
// bundle directory that stock `opa test policies/` and `opa check --strict policies/` accept.
package policies

import "embed"

// FS holds the bundle: .manifest, the Rego packs with their tests, and the data files.
//
//go:embed .manifest upgradescope
var FS embed.FS
