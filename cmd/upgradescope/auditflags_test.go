package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// What --audit-log and --audit-since refuse, before anything is collected: the kubeconfig
// named here does not exist, so an error about it would mean a collection had started.
func TestAuditLogFlagsAreRefusedBeforeAnythingIsCollected(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.log")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.log")
	nowhere := []string{"--kubeconfig", filepath.Join(dir, "no-kubeconfig")}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--audit-since alone would read nothing", []string{"scan", "--target", "1.37", "--files", examples, "--audit-since", "7d"},
			"--audit-since is only used with --audit-log"},
		{"--audit-since alone, on inventory", append([]string{"inventory", "--audit-since", "7d"}, nowhere...),
			"--audit-since is only used with --audit-log"},
		{"--audit-since alone, on the agent", append([]string{"agent", "--audit-since", "7d"}, nowhere...),
			"--audit-since is only used with --audit-log"},
		{"a path that does not exist is named", append([]string{"scan", "--target", "1.37", "--audit-log", missing}, nowhere...),
			"--audit-log: stat " + missing + ": no such file or directory"},
		{"a path that cannot be opened is named", append([]string{"inventory", "--audit-log", loop}, nowhere...),
			"--audit-log: stat " + loop + ": too many levels of symbolic links"},
		{"one bad path among good ones is named", []string{"scan", "--target", "1.37", "--files", examples, "--audit-log", dir, "--audit-log", missing},
			missing},
		{"standard input twice", append([]string{"scan", "--target", "1.37", "--audit-log", "-", "--audit-log", "-"}, nowhere...),
			"--audit-log - is given twice"},
		{"standard input on the agent, which has none", append([]string{"agent", "--audit-log", "-"}, nowhere...),
			"--audit-log -: the agent reads files"},
		{"a window that is no duration", append([]string{"scan", "--target", "1.37", "--audit-log", dir, "--audit-since", "a month"}, nowhere...),
			`--audit-since "a month": want days as 30d or a duration as 720h`},
		{"a window of nothing", append([]string{"scan", "--target", "1.37", "--audit-log", dir, "--audit-since", "0d"}, nowhere...),
			`--audit-since "0d": want a window longer than 0`},
		{"a window a Duration cannot hold", append([]string{"inventory", "--audit-log", dir, "--audit-since", "300000d"}, nowhere...),
			"at most 106751d"},
		{"an empty path", append([]string{"scan", "--target", "1.37", "--audit-log="}, nowhere...),
			"--audit-log: empty path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.args...)
			if r.code != exitErr || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, "kubeconfig") {
				t.Errorf("the collection started before the audit flags were checked: %s", r.stderr)
			}
		})
	}
}

func TestParseDaysReadsDaysAndDurations(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  string
	}{
		{"30d", "720h0m0s", ""},
		{"0d", "0s", ""},
		{"36h", "36h0m0s", ""},
		{"1h30m", "1h30m0s", ""},
		{"-1d", "", "want days as 30d"},
		{"-5h", "", "want days as 30d"},
		{"2w", "", "want days as 30d"},
		{"d", "", "want days as 30d"},
		{"106752d", "", "at most 106751d"},
	}
	for _, tt := range tests {
		got, err := parseDays("audit-since", tt.in, 30)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "--audit-since")):
			t.Errorf("parseDays(%q) = %v, %v; want an error naming --audit-since and saying %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got.String() != tt.want):
			t.Errorf("parseDays(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// A malformed line is counted and located, never quoted: an audit line may carry a token or
// a secret's name.
func TestTheMalformedLinesWarningLocatesTheFirstWithoutItsContent(t *testing.T) {
	tests := []struct {
		name    string
		section *inventory.AuditCalls
		want    string
	}{
		{"none", &inventory.AuditCalls{}, ""},
		{"no section", nil, ""},
		{"one", &inventory.AuditCalls{Malformed: 1, MalformedAt: []string{`/var/log/audit.log:17: invalid character 'B' looking for beginning of value "Bearer abc"`}},
			"the audit log has 1 line that is not an audit event (skipped; the first at /var/log/audit.log:17)"},
		{"many, in a rotation", &inventory.AuditCalls{Malformed: 12, MalformedAt: []string{"logs/audit-2026-11-30T10-00-00.000.log.gz:3: not JSON", "logs/audit.log:9: x"}},
			"the audit log has 12 lines that are not audit events (skipped; the first at logs/audit-2026-11-30T10-00-00.000.log.gz:3)"},
		{"standard input", &inventory.AuditCalls{Malformed: 2, MalformedAt: []string{"-:1: truncated"}},
			"the audit log has 2 lines that are not audit events (skipped; the first at -:1)"},
		{"a location the reader did not give", &inventory.AuditCalls{Malformed: 2, MalformedAt: []string{"something odd"}},
			"the audit log has 2 lines that are not audit events (skipped)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := malformedWarning(tt.section); got != tt.want {
				t.Errorf("warning %q, want %q", got, tt.want)
			}
		})
	}
}
