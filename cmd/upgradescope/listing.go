package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

// listFormat is the -o flag the list commands share: an aligned table or indented JSON.
type listFormat struct{ format string }

func (l *listFormat) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&l.format, "output", "o", "table", "table or json")
	completeValues(cmd, "output", "table", "json")
}

// check refuses another format before anything is read.
func (l *listFormat) check() error {
	if l.format != "table" && l.format != "json" {
		return fmt.Errorf("--output %q: want table or json", l.format)
	}
	return nil
}

// write prints v as JSON, or calls table.
func (l *listFormat) write(s streams, v any, table func() error) error {
	if l.format == "json" {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return table()
}
