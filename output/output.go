// Package output renders reports. Renderers never decide: every number and verdict they
// print comes from the report.
package output

import (
	"fmt"
	"io"

	"github.com/upgradescope/upgradescope/engine"
)

// Formats a report can be rendered in.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatSARIF = "sarif"
	FormatJUnit = "junit"
)

// Options carry what a renderer needs besides the report.
type Options struct {
	// FailOn decides which findings JUnit marks as failures.
	FailOn string
}

// ParseFormat validates an --output value.
func ParseFormat(s string) (string, error) {
	switch s {
	case FormatTable, FormatJSON, FormatSARIF, FormatJUnit:
		return s, nil
	}
	return "", fmt.Errorf("invalid --output %q: want table, json, sarif or junit", s)
}

// Render writes r to w in format.
func Render(w io.Writer, format string, r *engine.Report, opts Options) error {
	if len(r.Plan) > 0 && format != FormatTable && format != FormatJSON {
		return fmt.Errorf("an upgrade plan renders as table or json, not %s", format)
	}
	switch format {
	case FormatTable:
		return Table(w, r)
	case FormatJSON:
		return JSON(w, r)
	case FormatSARIF:
		return SARIF(w, r)
	case FormatJUnit:
		return JUnit(w, r, opts.FailOn)
	}
	return fmt.Errorf("unknown output format %q", format)
}
