package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/report"
)

const gateReadToken = "gate-read-token-0123456789abcdef"

// evaluatedAt is the one field two evaluations of the same input may differ in: the clock.
var evaluatedAt = regexp.MustCompile(`"evaluatedAt": "[^"]*"`)

func withoutClock(s string) string { return evaluatedAt.ReplaceAllString(s, `"evaluatedAt": "-"`) }

// runBuilt runs the built binary (the server's own build, so toolVersion agrees) with args.
func runBuilt(t *testing.T, args ...string) result {
	t.Helper()
	buildBinary(t)
	var out, errb bytes.Buffer
	cmd := exec.Command(agentBin, args...)
	cmd.Env = serveEnv()
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// TestGateAgainstARealServer runs `upgradescope gate` against the built binary's serve, its
// read API closed by a read token.
func TestGateAgainstARealServer(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--read-token-file", writeSecret(t, dir, "read", gateReadToken))
	gate := func(args ...string) result {
		return runCLI(t, append([]string{"gate", "--server", p.url, "--read-token", gateReadToken}, args...)...)
	}

	t.Run("the JSON report of a manifests directory is scan --files' byte for byte", func(t *testing.T) {
		g := runBuilt(t, "gate", "--server", p.url, "--read-token", gateReadToken, "--files", examples, "--target", "1.37", "-o", "json")
		s := runBuilt(t, "scan", "--files", examples, "--target", "1.37", "-o", "json")
		if g.code != 2 || s.code != 2 {
			t.Fatalf("gate exit %d, scan exit %d; want 2 and 2 (examples has blockers)\n%s", g.code, s.code, g.stderr)
		}
		if withoutClock(g.stdout) != withoutClock(s.stdout) {
			t.Errorf("gate's report differs from scan's:\ngate:\n%s\nscan:\n%s", g.stdout, s.stdout)
		}
		if !strings.Contains(g.stdout, `"file": "ci-runner.yaml"`) || !strings.Contains(g.stdout, `"filesBase": "../../examples/manifests"`) {
			t.Errorf("the report lost the objects' files:\n%s", g.stdout)
		}
		if !strings.Contains(g.stderr, "gate failed: 1.37: 6 blockers") {
			t.Errorf("stderr = %q, want the failed gate named", g.stderr)
		}
	})

	t.Run("an inventory is judged as eval --inventory judges it", func(t *testing.T) {
		inv := "../../testdata/clean-is-ready/inventory.json"
		g := runBuilt(t, "gate", "--server", p.url, "--read-token", gateReadToken, "--inventory", inv, "--target", "1.37", "-o", "json", "--allow-incomplete")
		e := runBuilt(t, "eval", "--inventory", inv, "--target", "1.37", "-o", "json", "--allow-incomplete")
		if g.code != 0 || e.code != 0 || withoutClock(g.stdout) != withoutClock(e.stdout) {
			t.Errorf("gate exit %d, eval exit %d, want 0 and 0 (--allow-incomplete); reports equal: %v\n%s\n%s", g.code, e.code,
				withoutClock(g.stdout) == withoutClock(e.stdout), g.stderr, g.stdout)
		}
	})

	t.Run("--fail-on never passes and the server renders --output", func(t *testing.T) {
		g := gate("--files", examples, "--target", "1.37", "--fail-on", "never", "-o", "markdown")
		if g.code != 0 || !strings.Contains(g.stdout, "### ⛔ Kubernetes 1.37: BLOCKED") || !strings.Contains(g.stdout, `\(ci-runner.yaml:3\)`) {
			t.Errorf("exit %d, stdout:\n%s\nstderr: %s", g.code, g.stdout, g.stderr)
		}
	})

	t.Run("the suppression file is sent and applied", func(t *testing.T) {
		cfg := write(t, t.TempDir(), ".upgradescope.yaml", "ignore:\n  - key: removed-behaviour/docker-socket\n    reason: the runner moves to kaniko\n")
		g := gate("--files", examples, "--target", "1.37", "--config", cfg, "-o", "json")
		var rep struct {
			Targets []struct {
				Suppressed []struct{ Key string } `json:"suppressed"`
			} `json:"targets"`
		}
		if err := json.Unmarshal([]byte(g.stdout), &rep); err != nil {
			t.Fatalf("exit %d: %v\n%s", g.code, err, g.stderr)
		}
		if len(rep.Targets) != 1 || len(rep.Targets[0].Suppressed) != 1 || rep.Targets[0].Suppressed[0].Key != "removed-behaviour/docker-socket" {
			t.Errorf("suppressed = %+v, want the docker-socket finding", rep.Targets)
		}
	})

	for _, tt := range []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"a refused cluster is an error with the server's message, not a failed gate",
			[]string{"--files", examples, "--target", "1.37", "--cluster", "no-such-cluster"},
			[]string{"POST " + p.url + "/api/v1/gate: 4", "cluster"}},
		{"an invalid suppression file is named with its line", []string{"--files", examples, "--target", "1.37", "--config", write(t, t.TempDir(), "bad.yaml", "ignore:\n  - reason: x\n")},
			[]string{"bad.yaml:2"}},
		{"a path without objects is an error", []string{"--files", t.TempDir(), "--target", "1.37"}, []string{"no Kubernetes objects found"}},
		{"--files and --inventory together", []string{"--files", examples, "--inventory", "x.json", "--target", "1.37"}, []string{"give one of --files PATH (manifests) or --inventory FILE"}},
		{"neither --files nor --inventory", []string{"--target", "1.37"}, []string{"give one of --files"}},
		{"an invalid target", []string{"--files", examples, "--target", "1.x"}, []string{"--target", `"1.x"`}},
		{"an unknown format", []string{"--files", examples, "--target", "1.37", "-o", "yaml"}, []string{`--output: unknown output format "yaml"`}},
		{"an unreadable inventory", []string{"--inventory", "/nonexistent.json", "--target", "1.37"}, []string{"read inventory", "/nonexistent.json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := gate(tt.args...)
			if g.code != 1 || g.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", g.code, g.stdout)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(g.stderr, want) {
					t.Errorf("stderr %q lacks %q", g.stderr, want)
				}
			}
			if strings.Contains(g.stderr, gateReadToken) {
				t.Error("the token is in the error")
			}
		})
	}

	t.Run("without the read token the server's refusal and a hint are printed", func(t *testing.T) {
		g := runCLI(t, "gate", "--server", p.url, "--files", examples, "--target", "1.37")
		if g.code != 1 || !strings.Contains(g.stderr, "401 Unauthorized") || !strings.Contains(g.stderr, "give --read-token or --read-token-file") {
			t.Errorf("exit %d, stderr %q", g.code, g.stderr)
		}
	})
}

func TestGateRefusesABadServerURL(t *testing.T) {
	for _, u := range []string{"fleet.example.com", "https://user:pw@fleet.example.com", "ftp://fleet.example.com"} {
		g := runCLI(t, "gate", "--server", u, "--files", examples, "--target", "1.37")
		if g.code != 1 || !strings.Contains(g.stderr, "--server") || strings.Contains(g.stderr, "pw@") {
			t.Errorf("--server %s: exit %d, stderr %q", u, g.code, g.stderr)
		}
	}
}

// TestGateTellsAFailedGateFromARefusal: only a 422 with a verdict and a report is a failed
// gate; a JSON error is an error whatever its status and headers.
// gateAnswer is a report as a server answers it: JSON, one target.
func gateAnswer(t *testing.T, verdict string, blockers int) string {
	t.Helper()
	rep := report.Report{SchemaVersion: 1, Source: "files", Bundles: []report.BundleInfo{}, Targets: []report.TargetResult{{
		Target: "1.37", Verdict: verdict, Score: report.Score(blockers, 0), Blockers: blockers,
		Findings: []report.Finding{}, Suppressed: []report.Finding{}, NotAssessed: []report.Gap{}}}}
	if verdict == report.VerdictUnknown {
		rep.Targets[0].NotAssessed = []report.Gap{{Capability: "helm", Required: true, Reason: "forbidden"}}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestGateTellsAFailedGateFromARefusal(t *testing.T) {
	type answer struct {
		status         int
		verdict, ctype string
		body, location string
		retryAfter     string
	}
	ready, blocked, unknown := gateAnswer(t, "ready", 0), gateAnswer(t, "blocked", 1), gateAnswer(t, "unknown", 0)
	for _, tt := range []struct {
		name    string
		answers []answer
		code    int
		stdout  string
		stderr  string
	}{
		{"200 passes and the report is rendered here", []answer{{status: 200, verdict: "ready", body: ready}}, 0, "READY, score 100/100", ""},
		{"422 with a verdict and a report fails the gate as scan does", []answer{{status: 422, verdict: "blocked", body: blocked}}, 2,
			"BLOCKED", "gate failed: 1.37: 1 blocker"},
		{"422 with an unknown verdict", []answer{{status: 422, verdict: "unknown", body: unknown}}, 2, "UNKNOWN",
			"gate failed: 1.37: verdict unknown (helm not assessed)"},
		{"422 with a JSON error is an error", []answer{{status: 422, body: `{"error":"cluster not found"}`}}, 1, "",
			"/api/v1/gate: 422 Unprocessable Entity: cluster not found"},
		{"a JSON error is an error even beside a verdict", []answer{{status: 422, verdict: "blocked", body: `{"error":"boom"}`}}, 1, "",
			"422 Unprocessable Entity: boom"},
		{"a 200 that is no gate's answer is an error", []answer{{status: 200, ctype: "text/html", body: "<html>Sign in</html>"}}, 1, "",
			"is not an upgradescope gate's answer"},
		{"a busy server is asked again after its Retry-After", []answer{{status: 503, retryAfter: "1", body: `{"error":"busy"}`},
			{status: 200, verdict: "ready", body: ready}}, 0, "READY", "asking again in 1s"},
		{"a server busy every time is an error", []answer{{status: 503, retryAfter: "1", body: `{"error":"busy"}`}}, 1, "",
			"503 Service Unavailable: busy"},
		{"413", []answer{{status: 413, body: `{"error":"the body is larger than 10 bytes (--max-gate-bytes)"}`}}, 1, "",
			"413 Request Entity Too Large: the body is larger"},
		{"500 without JSON", []answer{{status: 500, body: "oops"}}, 1, "", "500 Internal Server Error: oops"},
		{"a redirect is not followed", []answer{{status: 302, location: "https://elsewhere.example/api/v1/gate"}}, 1, "",
			"redirected to https://elsewhere.example"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []*http.Request
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a := tt.answers[min(len(got), len(tt.answers)-1)]
				body, _ := io.ReadAll(r.Body)
				got, bodies = append(got, r), append(bodies, body)
				for k, v := range map[string]string{"X-Upgradescope-Verdict": a.verdict, "Location": a.location, "Retry-After": a.retryAfter} {
					if v != "" {
						w.Header().Set(k, v)
					}
				}
				w.Header().Set("Content-Type", cmp.Or(a.ctype, "application/json"))
				w.WriteHeader(a.status)
				_, _ = io.WriteString(w, a.body)
			}))
			defer srv.Close()
			cfg := write(t, t.TempDir(), ".upgradescope.yaml", "ignore:\n  - category: deprecated-api\n    reason: later\n")
			r := runCLI(t, "gate", "--server", srv.URL, "--read-token", gateReadToken, "--inventory", "../../testdata/clean-is-ready/inventory.json",
				"--target", "v1.37", "--cluster", "prod", "-o", "markdown", "--fail-on", "blocker", "--config", cfg)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || (tt.stdout == "" && r.stdout != "") || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
			if strings.Contains(r.stderr, "later") || strings.Contains(r.stderr, gateReadToken) {
				t.Errorf("the error shows the suppression file or the token: %s", r.stderr)
			}
			req, q := got[0], got[0].URL.Query()
			var sent struct {
				Inventory json.RawMessage
				Config    string
			}
			if err := json.Unmarshal(bodies[0], &sent); err != nil || len(sent.Inventory) == 0 || !strings.Contains(sent.Config, "reason: later") {
				t.Errorf("body %s: want the inventory and the suppression file", bodies[0])
			}
			if req.Method != http.MethodPost || req.URL.Path != "/api/v1/gate" || q.Get("target") != "1.37" || q.Get("cluster") != "prod" ||
				q.Get("format") != "json" || q.Get("fail-on") != "blocker" || q.Get("allow-incomplete") != "false" || q.Has("config") ||
				req.Header.Get("Content-Type") != "application/vnd.upgradescope.gate+json" || req.Header.Get("Authorization") != "Bearer "+gateReadToken {
				t.Errorf("request %s %s %v %v", req.Method, req.URL.Path, q, req.Header)
			}
		})
	}
}
