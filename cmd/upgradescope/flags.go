package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// signingAlgs are the JWA algorithms for RSA and EC keys, offered by shell completion.
var signingAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// completeValues makes shell completion offer values for the flag name, and no file names.
func completeValues(cmd *cobra.Command, name string, values ...string) {
	if err := cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(err) // a flag that does not exist, or registered twice: a programming error
	}
}

// completeDirs makes shell completion offer directories for a command's DIR argument.
func completeDirs(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// deprecatedAlias keeps old as a hidden spelling of the flag name: it sets the same value,
// through the flag set so that the flag name counts as given (Changed), and warns on stderr.
// pflag's own MarkDeprecated would print the warning through cobra to stdout, into the
// report a pipeline reads.
func deprecatedAlias(cmd *cobra.Command, old, name string) {
	f := cmd.Flags().Lookup(name)
	set := func(s string) error {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: --%s is deprecated; use --%s\n", old, name)
		return cmd.Flags().Set(name, s)
	}
	cmd.Flags().AddFlag(&pflag.Flag{
		Name: old, Usage: "deprecated spelling of --" + name, Hidden: true,
		Value: &aliasValue{Value: f.Value, set: set}, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal,
	})
}

// aliasValue is the value of a deprecated spelling: the flag's own, set behind a warning.
type aliasValue struct {
	pflag.Value
	set func(string) error
}

func (a *aliasValue) Set(s string) error { return a.set(s) }

// plainBools shows every bool flag of cmd and its subcommands as "--plan" in help, not as
// "--plan[=true|false]", which pflag 1.1 (required by OPA) prints for every bool flag it
// recognises. The flags still take no value and still accept --plan=false. The help,
// version and completion flags cobra adds later are added here first, so they are covered.
func plainBools(cmd *cobra.Command) {
	if !cmd.HasParent() {
		cmd.InitDefaultVersionFlag()
		cmd.InitDefaultCompletionCmd()
	}
	cmd.InitDefaultHelpFlag()
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if _, done := f.Value.(plainBool); !done && f.Value.Type() == "bool" && f.NoOptDefVal == "true" {
				f.Value = plainBool{f.Value}
			}
		})
	}
	for _, sub := range cmd.Commands() {
		plainBools(sub)
	}
}

// plainBool is a bool flag's value without the IsBoolFlag method pflag's help looks for;
// NoOptDefVal, which pflag's parser looks at, still makes "--plan" mean true.
type plainBool struct{ pflag.Value }

// parseDays reads a flag named name that takes whole days ("90d") or a Go duration, never
// negative; example is the number of days its errors suggest.
func parseDays(name, s string, example int) (time.Duration, error) {
	want := fmt.Sprintf("want days as %dd or a duration as %dh", example, example*24)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		// Past about 290 years a Duration wraps: a window meant as forever must not become
		// a few seconds.
		if err != nil || n < 0 || n > int(math.MaxInt64/int64(24*time.Hour)) {
			return 0, fmt.Errorf("--%s %q: %s (at most 106751d)", name, s, want)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--%s %q: %s", name, s, want)
	}
	return d, nil
}
