package output

import (
	"encoding/json"
	"io"

	"github.com/upgradescope/upgradescope/report"
)

// jsonRenderer writes the report as two-space-indented JSON with a trailing newline; its
// contract is docs/report.schema.json.
type jsonRenderer struct{}

func (jsonRenderer) Render(w io.Writer, r *report.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
