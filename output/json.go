package output

import (
	"encoding/json"
	"io"

	"github.com/upgradescope/upgradescope/engine"
)

// JSON writes the report as two-space-indented JSON with a trailing newline; its contract
// is docs/report.schema.json.
func JSON(w io.Writer, r *engine.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
