package main

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// placeholder is what a flag's value may be called in help: an upper-case word.
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// pflag takes the first backquoted text of a usage string as the value's name in help
// ("--inventory upgradescope inventory"), so every flag of every command backquotes only a
// placeholder (FILE, URL, NAME), or nothing.
func TestEveryFlagsHelpNamesItsValueWithAPlaceholderOrItsType(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			seen++
			name, _ := pflag.UnquoteUsage(f)
			if strings.Contains(f.Usage, "`") && !placeholder.MatchString(name) {
				t.Errorf("%s --%s: help names its value %q (backquotes in %q); backquote an upper-case placeholder only",
					c.CommandPath(), f.Name, name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}))
	if seen < 50 {
		t.Fatalf("checked only %d flags", seen)
	}
	help := runCLI(t, "push", "--help").stdout
	for _, want := range []string{"--inventory FILE ", "--server URL ", "--ingest-token-file FILE ", "--cluster-name NAME ", "--server-ca-file FILE "} {
		if !strings.Contains(help, want) {
			t.Errorf("push --help lacks %q:\n%s", want, help)
		}
	}
}
