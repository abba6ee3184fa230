package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// deprecatedAlias keeps old as a hidden spelling of the flag name: it sets the same value and
// warns on stderr. pflag's own MarkDeprecated would print the warning through cobra to stdout,
// into the report a pipeline reads.
func deprecatedAlias(cmd *cobra.Command, old, name string) {
	f := cmd.Flags().Lookup(name)
	warn := func() { fmt.Fprintf(cmd.ErrOrStderr(), "warning: --%s is deprecated; use --%s\n", old, name) }
	cmd.Flags().AddFlag(&pflag.Flag{
		Name: old, Usage: "deprecated spelling of --" + name, Hidden: true,
		Value: &aliasValue{Value: f.Value, warn: warn}, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal,
	})
}

// aliasValue is the value of a deprecated spelling: the flag's own, behind a warning.
type aliasValue struct {
	pflag.Value
	warn func()
}

func (a *aliasValue) Set(s string) error {
	a.warn()
	return a.Value.Set(s)
}
