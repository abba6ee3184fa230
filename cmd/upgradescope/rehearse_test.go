package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/report"
)

func TestRehearseReportsWhatTheTargetsAPIServerRefusesAndWhatItCouldNotReplay(t *testing.T) {
	bins := kubetest.Binaries(t)
	type want struct {
		verdict string
		code    int
		// findings are the rehearsal findings' titles.
		findings []string
		gap      string
	}
	for _, tc := range []struct {
		name  string
		files string
		want  want
	}{
		{"refusals are blockers naming the file and line", "testdata/rehearse/refused", want{
			verdict: "blocked", code: exitGate,
			findings: []string{
				"Deployment shop/web (shop.yaml:2): the 1.35 API server refuses it: Invalid",
				"Service shop/Shop_1 (shop.yaml:18): the 1.35 API server refuses it: Invalid",
			},
		}},
		{"an object that could not be replayed makes the verdict unknown", "testdata/rehearse/unreplayed", want{
			verdict: "unknown", code: exitGate,
			gap: "1 of 1 objects not replayed into the 1.35 API server (1 crd missing)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, "rehearse", "--files", tc.files, "--target", "1.35", "--kube-binaries", bins, "-o", "json", "-q")
			if res.code != tc.want.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, tc.want.code, res.stderr)
			}
			var rep report.Report
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatalf("%v\n%s", err, res.stdout)
			}
			tr := rep.Targets[0]
			var titles []string
			for _, f := range tr.Findings {
				if f.Category == "rehearsal" {
					titles = append(titles, f.Title)
					if f.Severity != report.SeverityBlocker || len(f.Objects) != 1 || f.Objects[0].File != "shop.yaml" || f.Objects[0].Line == 0 {
						t.Errorf("finding %+v, want a blocker naming shop.yaml and a line", f)
					}
				}
			}
			if tr.Verdict != tc.want.verdict || strings.Join(titles, "\n") != strings.Join(tc.want.findings, "\n") {
				t.Errorf("verdict %s, rehearsal findings:\n%s\nwant %s and:\n%s", tr.Verdict, strings.Join(titles, "\n"), tc.want.verdict, strings.Join(tc.want.findings, "\n"))
			}
			if tc.want.gap != "" && !hasGap(tr.NotAssessed, "rehearsal", tc.want.gap) {
				t.Errorf("not assessed %+v, want the rehearsal gap %q", tr.NotAssessed, tc.want.gap)
			}
		})
	}
}

func hasGap(gaps []report.Gap, capability, reason string) bool {
	for _, g := range gaps {
		if g.Capability == capability && g.Required && g.Reason == reason {
			return true
		}
	}
	return false
}

func TestRehearseRefusesWhatItCannotDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no server", []string{"--files", examples, "--target", "1.35"}, "at least one of the flags in the group [kube-binaries rehearse-kubeconfig] is required"},
		{"two servers", []string{"--files", examples, "--target", "1.35", "--kube-binaries", "x", "--rehearse-kubeconfig", "y"}, "none of the others can be"},
		{"two targets", []string{"--files", examples, "--target", "1.35,1.36", "--rehearse-kubeconfig", "x"}, "rehearse takes one --target"},
		{"binaries missing", []string{"--files", examples, "--target", "1.35", "--kube-binaries", "/nonexistent"}, "--kube-binaries /nonexistent: no etcd there"},
		{"no time", []string{"--files", examples, "--target", "1.35", "--rehearse-kubeconfig", "x", "--rehearse-timeout", "0s"}, "--rehearse-timeout 0s: want a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, append([]string{"rehearse", "-q"}, tc.args...)...)
			if res.code != exitErr || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", res.code, res.stderr, tc.want)
			}
		})
	}
}

// The README's rehearse example is pasted output: the lines it quotes must be printed, in order,
// by the command it shows, against a real API server of 1.35.
func TestTheREADMEsRehearseExampleIsWhatRehearsePrints(t *testing.T) {
	bins := kubetest.Binaries(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	example := exampleBlock(string(readme), "      [rehearsal] Deployment shop/worker")
	if len(example) < 4 {
		t.Fatalf("the README's rehearse example has %d lines; want rehearse's output", len(example))
	}
	res := runCLI(t, "rehearse", "--files", examples, "--target", "1.35", "--kube-binaries", bins, "-q")
	if res.code != exitGate {
		t.Fatalf("exit %d, want %d (blockers); stderr:\n%s", res.code, exitGate, res.stderr)
	}
	printed := strings.Split(res.stdout, "\n")
	at := 0
	for _, line := range example {
		if strings.TrimSpace(line) == "" {
			continue
		}
		for at < len(printed) && printed[at] != line {
			at++
		}
		if at == len(printed) {
			t.Fatalf("README line %q is not printed by rehearse (in this order):\n%s", line, res.stdout)
		}
	}
}
