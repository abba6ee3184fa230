package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/output"
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

// textTable is an aligned table of values a database, a server or an agent wrote: every
// cell is escaped (output.Escape) before it is laid out, so a UID or a version holding an
// escape sequence, a tab or a line break can neither drive the terminal nor forge a row.
type textTable struct{ tw *tabwriter.Writer }

// newTextTable starts a table on w with its header.
func newTextTable(w io.Writer, header ...string) *textTable {
	t := &textTable{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *textTable) row(cells ...string) {
	escaped := make([]string, len(cells))
	for i, c := range cells {
		escaped[i] = output.Escape(c)
	}
	fmt.Fprintln(t.tw, strings.Join(escaped, "\t"))
}

func (t *textTable) flush() error { return t.tw.Flush() }
