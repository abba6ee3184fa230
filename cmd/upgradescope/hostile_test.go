package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// hostile is one case of the adversarial suite: an input an attacker or a careless user
// hands the binary, and how the binary must end. Every case ends with its exit code and a
// message saying what was refused and where, below maxHostileRSS, and never as ready.
type hostile struct {
	name   string
	args   func(t *testing.T, dir string) []string
	code   int
	want   []string // each appears in the output
	absent []string // none appears in the output
}

// maxHostileRSS is the ceiling on a command's peak RSS: issue 30's 256 MiB, raised by what
// linking Helm's template engine for the chart advisor (issue 36) added to every process
// (23.5 MB of binary, about 18 MiB resident; docs/performance.md, "What it costs every
// scan"). The tightest case is numbers.range(1, 1e9) under the default bounds: the 128 MiB
// heap guard plus what the rule allocates between two of its samples, which a loaded machine
// stretches; with the engine linked it peaked at 272 MiB alone and 294 MiB under .ci/run.
const maxHostileRSS = 320 << 20

// maxHostileCPU is the ceiling on a command's time, taken as CPU time, user and system,
// which other tests sharing the machine stretch less than the wall clock. Issue 30 set 10 s;
// on the 2-core machines of 2026-12-02 the same commit (aa26ed04) spends 14.8 s on the
// hostile probe pack and 9.9 s walking 256 MiB of tiny documents, so the ceiling is 30 s: a
// case that runs away still passes it within the minute hangAfter allows, and the speed of
// each case is docs/performance.md's to track, not an ordinary test's.
const maxHostileCPU = 30 * time.Second

// hangAfter only stops a case that hangs, so the suite ends; it is no timing assertion.
const hangAfter = 60 * time.Second

func runHostile(t *testing.T, tests []hostile) {
	t.Helper()
	buildBinary(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := tt.args(t, dir)
			ctx, cancel := context.WithTimeout(t.Context(), hangAfter)
			defer cancel()
			code, use, out := measuredUse(ctx, t, dir, agentBin, args...)
			if ctx.Err() != nil {
				t.Fatalf("%v hung: killed after %s\n%s", args, hangAfter, out)
			}
			checkHostile(t, tt, args, code, use.peak, out)
			t.Logf("CPU %s", use.cpu.Round(time.Millisecond))
			if use.cpu > maxHostileCPU {
				t.Errorf("%v: %s of CPU, want under %s", args, use.cpu.Round(time.Millisecond), maxHostileCPU)
			}
		})
	}
}

func checkHostile(t *testing.T, tt hostile, args []string, code int, peak int64, out string) {
	t.Helper()
	if code != tt.code {
		t.Errorf("%v: exit %d, want %d\n%s", args, code, tt.code, out)
	}
	for _, w := range tt.want {
		if !strings.Contains(out, w) {
			t.Errorf("%v: output lacks %q:\n%s", args, w, out)
		}
	}
	for _, a := range append(tt.absent, "VERDICT READY") {
		if strings.Contains(out, a) {
			t.Errorf("%v: output holds %q:\n%s", args, a, out)
		}
	}
	t.Logf("peak RSS %d MiB", peak>>20)
	if peak > maxHostileRSS {
		t.Errorf("%v: peak RSS %d MiB, want under %d MiB", args, peak>>20, maxHostileRSS>>20)
	}
}

const removedIngress = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: shop\n  namespace: web\n"

// scanOf scans files written under dir/m with the arguments given after them.
func scanOf(files map[string]string, extra ...string) func(*testing.T, string) []string {
	return func(t *testing.T, dir string) []string {
		for name, content := range files {
			write(t, dir, filepath.Join("m", name), content)
		}
		return append([]string{"scan", "--files", filepath.Join(dir, "m"), "--target", "1.37"}, extra...)
	}
}

// Issue 13, items 2, 6 and 8: bundles, configuration and files that would cost unbounded
// memory or time are refused by bounds, naming what was refused.
func TestHostileBundlesConfigsAndFilesAreRefusedWithinBounds(t *testing.T) {
	runHostile(t, []hostile{
		{
			name: "a gzip bomb bundle is refused before it unpacks (item 2)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "bomb.tar.gz", string(bundletest.Bomb(t, 34, 60<<20)))
				return []string{"bundle", "inspect", "bomb.tar.gz"}
			},
			code: 1, want: []string{"bomb.tar.gz", "bundle too large: unpacks to more than 64 MiB"},
		},
		{
			name: "a gzip bomb given to scan as a bundle is refused (item 2)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "bomb.tar.gz", string(bundletest.Bomb(t, 34, 60<<20)))
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--bundle", "bomb.tar.gz")(t, dir)
			},
			code: 1, want: []string{"bomb.tar.gz", "bundle too large"},
		},
		{
			name: "a 2 GiB suppression file is refused unread (item 6)",
			args: func(t *testing.T, dir string) []string {
				p := write(t, dir, ".upgradescope.yaml", "ignore: []\n")
				if err := os.Truncate(p, 2<<30); err != nil {
					t.Fatal(err)
				}
				return scanOf(map[string]string{"a.yaml": removedIngress})(t, dir)
			},
			code: 1, want: []string{".upgradescope.yaml", "larger than 1 MiB"},
		},
		{
			name: "a device as the suppression file is refused (item 6)",
			args: scanOf(map[string]string{"a.yaml": removedIngress}, "--config", "/dev/zero"),
			code: 1, want: []string{"/dev/zero: not a regular file"},
		},
		{
			name: "a device as a bundle is refused unread (item 6)",
			args: scanOf(map[string]string{"a.yaml": removedIngress}, "--bundle", "/dev/zero"),
			code: 1, want: []string{"bundle /dev/zero: not a regular file"},
		},
		{
			name: "a bundle file past the size bound is refused unread (item 6)",
			args: func(t *testing.T, dir string) []string {
				p := write(t, dir, "huge.tar.gz", "")
				if err := os.Truncate(p, 1<<30); err != nil {
					t.Fatal(err)
				}
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--bundle", "huge.tar.gz")(t, dir)
			},
			code: 1, want: []string{"bundle huge.tar.gz: bundle too large: larger than 64 MiB compressed"},
		},
		{
			name: "a FIFO given as the manifests is refused, not waited on (item 6)",
			args: func(t *testing.T, dir string) []string {
				if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
					t.Fatal(err)
				}
				return []string{"scan", "--files", "fifo", "--target", "1.37"}
			},
			code: 1, want: []string{"fifo is not a regular file"},
		},
		{
			name: "a bundle URL that trickles ends at the fetch deadline (item 8)",
			args: func(t *testing.T, dir string) []string {
				srv := bundletest.Trickle(t)
				_, public := bundletest.Keys(t, dir)
				return scanOf(map[string]string{"a.yaml": removedIngress},
					"--bundle", srv.URL+"/b.tar.gz", "--verification-key", public, "--bundle-timeout", "1s")(t, dir)
			},
			code: 1, want: []string{"no bundle within 1s"},
		},
	})
}

// Issue 13, items 9 to 14: input that used to give a wrong verdict, leak a secret or reach
// the terminal raw.
func TestHostileInputNeverGivesAWrongVerdictOrLeaks(t *testing.T) {
	runHostile(t, []hostile{
		{
			name: "a symlinked manifest is read and judged (item 9)",
			args: func(t *testing.T, dir string) []string {
				target := write(t, dir, "elsewhere/ing.yaml", removedIngress)
				if err := os.MkdirAll(filepath.Join(dir, "m"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(dir, "m", "link.yaml")); err != nil {
					t.Fatal(err)
				}
				return []string{"scan", "--files", "m", "--target", "1.37"}
			},
			code: 2, want: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress", "link.yaml:1"},
		},
		{
			name: "a file with braces and binary bytes beside a removed API is not ready (item 9)",
			args: scanOf(map[string]string{
				"a.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
				"bin.yaml": removedIngress + "  labels: {{ x }}\n\x00\x01\x02",
			}),
			code: 2, want: []string{"bin.yaml:1", "VERDICT UNKNOWN"},
		},
		{
			name: "findings that are not a set of objects fail naming the pack (item 10)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "p/str.rego", "package upgradescope.custom.str\n\nfindings := \"a string\"\n")
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--policy", "p")(t, dir)
			},
			code: 1, want: []string{"policy custom/str breaks the findings contract"},
		},
		{
			name: "a pack's findings two packages down are refused at load (item 10)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "p/deep.rego", "package upgradescope.custom.team.a.b\n\nfindings contains {\"key\": \"removed-api/x\"}\n")
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--policy", "p")(t, dir)
			},
			code: 1, want: []string{"upgradescope.custom.team.a.b"},
		},
		{
			name: "credentials in an upper-case URL stay out of the error (item 11)",
			args: scanOf(map[string]string{"a.yaml": removedIngress},
				"--bundle", "HTTP://user:pw@127.0.0.1:1/b.tar.gz?token=s3cret"),
			code: 1, want: []string{"127.0.0.1:1"}, absent: []string{"pw@", "s3cret"},
		},
		{
			name: "credentials in a URL missing its colon stay out of the error (item 11)",
			args: scanOf(map[string]string{"a.yaml": removedIngress}, "--bundle", "http//user:pw@x/b.tar.gz?token=s3cret"),
			code: 1, want: []string{"not an http:// or https:// URL"}, absent: []string{"pw@", "s3cret"},
		},
		{
			name: "a pack's tests cannot reach the network (item 12)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "n/net_test.rego", "package upgradescope.custom.net\n\ntest_net if {\n\thttp.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1:1\"})\n}\n")
				return []string{"policy", "test", "n"}
			},
			code: 1, want: []string{"net_test.rego:4", "http.send"},
		},
		{
			name: "escape sequences in object names are escaped in the table (item 13)",
			args: scanOf(map[string]string{
				"a.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: \"shop\\e[2J\\e]0;READY\\a\"\n  namespace: web\n",
			}),
			code: 2, want: []string{"VERDICT BLOCKED", `shop\x1b[2J`}, absent: []string{"\x1b", "\a"},
		},
		{
			name: "a suppression rule giving a field twice is refused naming the line (item 14)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "dup.yaml", "ignore:\n- key: removed-api/x\n  reason: a\n  reason: b\n")
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--config", "dup.yaml")(t, dir)
			},
			code: 1, want: []string{"dup.yaml:4: reason is given twice"},
		},
		{
			name: "a suppression rule with a blank reason is refused naming the line (item 14)",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "blank.yaml", "ignore:\n- key: removed-api/x\n  reason: \"  \"\n")
				return scanOf(map[string]string{"a.yaml": removedIngress}, "--config", "blank.yaml")(t, dir)
			},
			code: 1, want: []string{"blank.yaml:2: ignore rule needs a reason"},
		},
	})
}
