package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// flagAliases are the old spellings issue 31 renamed, each kept as a hidden alias: one
// spelling per concept across commands (--target, --server, --ingest-token, --listen,
// --bundle-token-file), as was done for the key flags.
var flagAliases = []struct {
	command   []string
	old, name string
	value     string
}{
	{[]string{"agent"}, "targets", "target", "1.37,1.38"},
	{[]string{"agent"}, "server-url", "server", "https://fleet.example.com"},
	{[]string{"agent"}, "server-token", "ingest-token", "t0k"},
	{[]string{"agent"}, "server-token-file", "ingest-token-file", "ingest.token"},
	{[]string{"push"}, "server-url", "server", "https://fleet.example.com"},
	{[]string{"push"}, "server-token", "ingest-token", "t0k"},
	{[]string{"push"}, "server-token-file", "ingest-token-file", "ingest.token"},
	{[]string{"serve"}, "targets", "target", "1.37,1.38"},
	{[]string{"bundle", "dry-run"}, "targets", "target", "1.37,1.38"},
	{[]string{"bundle", "serve"}, "addr", "listen", "127.0.0.1:9000"},
	{[]string{"bundle", "serve"}, "token-file", "bundle-token-file", "bundle.token"},
}

// parsedFlags parses args on a fresh command tree and answers every visible flag of the
// command as "value changed", and what the parse wrote on stderr.
func parsedFlags(t *testing.T, command, args []string) (map[string]string, string) {
	t.Helper()
	var errb bytes.Buffer
	root := newRootCommand(streams{in: strings.NewReader(""), out: io.Discard, err: &errb})
	cmd, _, err := root.Find(command)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v %v: %v", command, args, err)
	}
	state := map[string]string{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			state[f.Name] = f.Value.String() + " " + map[bool]string{true: "changed", false: "default"}[f.Changed]
		}
	})
	return state, errb.String()
}

// Each old spelling, given once or twice, leaves every flag as the new one does (the value,
// and the flag counted as given, which the dry run's --server mode checks), is hidden from
// help, and warns on stderr.
func TestOldFlagSpellingsSetWhatTheNewOnesDo(t *testing.T) {
	for _, a := range flagAliases {
		t.Run(strings.Join(a.command, " ")+" --"+a.old, func(t *testing.T) {
			for _, times := range []int{1, 2} {
				var oldArgs, newArgs []string
				for range times {
					oldArgs = append(oldArgs, "--"+a.old, a.value)
					newArgs = append(newArgs, "--"+a.name+"="+a.value)
				}
				got, warning := parsedFlags(t, a.command, oldArgs)
				want, none := parsedFlags(t, a.command, newArgs)
				for name, w := range want {
					if got[name] != w {
						t.Errorf("--%s %s: --%s is %q, want %q as with --%s", a.old, a.value, name, got[name], w, a.name)
					}
				}
				if want[a.name] == "" || !strings.HasSuffix(want[a.name], " changed") {
					t.Errorf("--%s %s left --%s %q", a.name, a.value, a.name, want[a.name])
				}
				if _, shown := got[a.old]; shown {
					t.Errorf("--%s is shown in help", a.old)
				}
				if w := "warning: --" + a.old + " is deprecated; use --" + a.name + "\n"; !strings.Contains(warning, w) || none != "" {
					t.Errorf("stderr %q with the old spelling, %q with the new; want %q only with the old", warning, none, w)
				}
			}
		})
	}
}

// Run whole, each old spelling gives the exit code, stdout and stderr of the new one, but
// for the warning line.
func TestOldFlagSpellingsGiveTheSameRun(t *testing.T) {
	t.Setenv("UPGRADESCOPE_SERVER_TOKEN", "")
	nowhere := []string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}
	agent := func(args ...string) []string { return append(append([]string{"agent"}, nowhere...), args...) }
	bundleDir, db := t.TempDir(), filepath.Join(t.TempDir(), "fleet.db")
	fleet := dryRunFleet(t, "teams", "clean-is-ready", "addon-eol-approaching")
	tests := []struct {
		name     string
		old, new []string
	}{
		{"bundle dry-run --targets judges at the same minors",
			[]string{"bundle", "dry-run", dryRunData + "/candidate", "--inventories", fleet, "--targets", "1.37", pinned, "-q"},
			[]string{"bundle", "dry-run", dryRunData + "/candidate", "--inventories", fleet, "--target", "1.37", pinned, "-q"}},
		{"bundle dry-run --targets is refused with --server",
			[]string{"bundle", "dry-run", dryRunData + "/candidate", "--server", "http://127.0.0.1:1", "--targets", "1.37"},
			[]string{"bundle", "dry-run", dryRunData + "/candidate", "--server", "http://127.0.0.1:1", "--target", "1.37"}},
		{"agent --targets is checked", agent("--targets", "1.30,1.31,1.32,1.33,1.34,1.35,1.36,1.37,1.38"),
			agent("--target", "1.30,1.31,1.32,1.33,1.34,1.35,1.36,1.37,1.38")},
		{"agent --server-url and --server-token are checked", agent("--server-url", "ftp://fleet.example.com", "--server-token", "t"),
			agent("--server", "ftp://fleet.example.com", "--ingest-token", "t")},
		{"agent --server-token-file is read", agent("--server-url", "https://127.0.0.1:1", "--server-token-file", "/dev/zero"),
			agent("--server", "https://127.0.0.1:1", "--ingest-token-file", "/dev/zero")},
		{"serve --targets is checked", []string{"serve", "--db", db, "--targets", "1.33,1.34,1.35,1.36,1.37"},
			[]string{"serve", "--db", db, "--target", "1.33,1.34,1.35,1.36,1.37"}},
		{"bundle serve --token-file is read", []string{"bundle", "serve", bundleDir, "--token-file", "/dev/zero"},
			[]string{"bundle", "serve", bundleDir, "--bundle-token-file", "/dev/zero"}},
		{"bundle serve --addr is listened on", []string{"bundle", "serve", bundleDir, "--addr", "127.0.0.1:no-port"},
			[]string{"bundle", "serve", bundleDir, "--listen", "127.0.0.1:no-port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, n := runCLI(t, tt.old...), runCLI(t, tt.new...)
			stderr := strings.Join(slicesDeleteWarnings(strings.SplitAfter(o.stderr, "\n")), "")
			if o.code != n.code || o.stdout != n.stdout || stderr != n.stderr {
				t.Errorf("old spelling: exit %d\n%s\n%s\nnew spelling: exit %d\n%s\n%s", o.code, o.stdout, o.stderr, n.code, n.stdout, n.stderr)
			}
			if n.stdout == "" && n.stderr == "" {
				t.Errorf("the run said nothing: it proves nothing")
			}
		})
	}
}

// slicesDeleteWarnings drops the deprecation warnings from lines.
func slicesDeleteWarnings(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "warning: --") || !strings.Contains(l, " is deprecated; use --") {
			out = append(out, l)
		}
	}
	return out
}
