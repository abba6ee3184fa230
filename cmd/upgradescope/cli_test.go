package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/policies"
)

const pinned = "--now=2026-11-29T12:00:00Z"

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, streams{in: strings.NewReader(""), out: &out, err: &errb})
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const examples = "../../examples/manifests"

func TestCommandsExitWithTheDocumentedCodes(t *testing.T) {
	broken := t.TempDir()
	write(t, broken, "ok.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n")
	write(t, broken, "bad.yaml", "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: x: y\n")
	ingressOnly := t.TempDir()
	write(t, ingressOnly, "ingress.yaml", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: shop\n")
	empty := t.TempDir()
	write(t, empty, "values.yaml", "replicaCount: 1\n")

	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		stdoutNone []string
	}{
		{name: "a blocker fails the default gate", args: []string{"scan", "--files", examples, "--target", "1.37", pinned},
			code: 2, stdout: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress removed in 1.22", "ingress.yaml:4", "Ingress NGINX Controller is end-of-life",
				"Workloads mount the Docker socket: removed in 1.24 (1 object)", "Deployment ci/runner (ci-runner.yaml:3)"}, stderr: []string{"gate failed: 1.37: 6 blockers"}},
		{name: "--fail-on never always passes", args: []string{"scan", "--files", examples, "--target", "1.37", "--fail-on", "never", pinned}, code: 0},
		{name: "a target before any removal is ready", args: []string{"scan", "--files", ingressOnly, "--target", "1.20", pinned},
			code: 0, stdout: []string{"VERDICT READY", "INFO (1)"}},
		{name: "a warning passes the default gate", args: []string{"scan", "--files", ingressOnly, "--target", "1.21", pinned},
			code: 0, stdout: []string{"VERDICT READY", "WARNING (1)"}},
		{name: "--fail-on warning fails on a warning", args: []string{"scan", "--files", ingressOnly, "--target", "1.21", "--fail-on", "warning", pinned},
			code: 2, stderr: []string{"1.21: 1 warning"}},
		{name: "an undecodable document makes the verdict unknown, which fails the gate", args: []string{"scan", "--files", broken, "--target", "1.37", pinned},
			code: 2, stdout: []string{"VERDICT UNKNOWN", "api-usage          required  1 document(s) could not be decoded"}, stderr: []string{"bad.yaml:4: invalid YAML", "verdict unknown (api-usage not assessed)"}},
		{name: "--allow-incomplete lets an unknown verdict pass", args: []string{"scan", "--files", broken, "--target", "1.37", "--allow-incomplete", pinned}, code: 0},
		{name: "a walk that finds no object is an error", args: []string{"scan", "--files", empty, "--target", "1.37"},
			code: 1, stderr: []string{"no Kubernetes objects found"}},
		{name: "a missing path is an error", args: []string{"scan", "--files", "/nonexistent", "--target", "1.37"}, code: 1, stderr: []string{"no such file"}},
		{name: "an invalid target is an error", args: []string{"scan", "--files", examples, "--target", "1.x"}, code: 1, stderr: []string{`invalid Kubernetes version "1.x"`}},
		{name: "an unknown output format is an error", args: []string{"scan", "--files", examples, "--target", "1.37", "-o", "yaml"}, code: 1, stderr: []string{`--output: unknown output format "yaml": want table, json, sarif, junit, markdown or gitlab-codequality`}},
		{name: "a GitLab Code Quality report keeps the gate's exit code", args: []string{"scan", "--files", examples, "--target", "1.37", "-o", "gitlab-codequality", pinned},
			code: 2, stdout: []string{`"check_name": "removed-behaviour/`, `"path": "examples/manifests/ci-runner.yaml"`, `"severity": "critical"`}},
		{name: "the target is required", args: []string{"scan", "--files", examples}, code: 1, stderr: []string{`"target" not set`}},
		{name: "a markdown summary keeps the gate's exit code", args: []string{"scan", "--files", examples, "--target", "1.37", "-o", "markdown", pinned},
			code: 2, stdout: []string{"### ⛔ Kubernetes 1.37: BLOCKED, score 25/100", "| blocker | `removed-behaviour` Workloads mount the Docker socket", "Deployment ci/runner \\(ci-runner.yaml:3\\)"}},
		{name: "eval writes markdown too", args: []string{"eval", "--inventory", "../../testdata/clean-is-ready/inventory.json", "--target", "1.37", "-o", "markdown", "--fail-on", "never", pinned},
			code: 0, stdout: []string{"## upgradescope", "### ", "Kubernetes 1.37"}},
		{name: "charts Argo CD and Flux manifests declare are read in files mode", args: []string{"scan", "--files", "../../examples/gitops", "--target", "1.37", pinned},
			code: 2, stdout: []string{"[eol-addon] Ingress NGINX Controller", "evidence: argocd argocd/ingress: chart ingress-nginx 4.11.2", "dns/external-dns: chart external-dns 1.15.0", "helm               optional  files mode; charts Argo CD renders"}},
		{name: "a custom pack adds findings", args: []string{"scan", "--files", examples, "--target", "1.37", "--policy", "../../examples/policies", "--fail-on", "never", pinned},
			code: 0, stdout: []string{"rules " + policies.RulesRevision + " (embedded), kb " + policies.KBRevision + " (embedded), acme 2026-11-29.1 (../../examples/policies)"}},
		{name: "policy test passes like opa test", args: []string{"policy", "test", "../../examples/policies"}, code: 0, stdout: []string{"PASS: 7/7"}},
		{name: "version names the set a --bundle would give", args: []string{"version", "--bundle", "../../policies/kb"}, code: 0, stdout: []string{"bundle:     kb " + policies.KBRevision + " (../../policies/kb)"}},
		{name: "version names OPA and the KB horizon", args: []string{"version"}, code: 0, stdout: []string{"horizon: Kubernetes 1.37", "opa:        v1.22.3", "bundle:     rules " + policies.RulesRevision + " (embedded)", "bundle:     kb " + policies.KBRevision + " (embedded)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}

func TestEvalOfACollectedInventoryGatesExactlyLikeScan(t *testing.T) {
	inv := runCLI(t, "inventory", "--files", examples, pinned)
	if inv.code != 0 {
		t.Fatalf("inventory exit %d: %s", inv.code, inv.stderr)
	}
	path := write(t, t.TempDir(), "inventory.json", inv.stdout)
	for _, format := range []string{"json", "sarif", "table"} {
		scan := runCLI(t, "scan", "--files", examples, "--target", "1.36,1.37", "-o", format, pinned)
		eval := runCLI(t, "eval", "--inventory", path, "--target", "1.36,1.37", "-o", format, pinned)
		if scan.code != 2 || eval.code != scan.code {
			t.Errorf("%s: scan exit %d, eval exit %d; want both 2", format, scan.code, eval.code)
		}
		if scan.stdout != eval.stdout {
			t.Errorf("%s: eval's report differs from scan's:\nscan:\n%s\neval:\n%s", format, scan.stdout, eval.stdout)
		}
	}
}

func TestEvalRefusesAnInventoryThatBreaksTheSchemaNamingEveryPointer(t *testing.T) {
	path := write(t, t.TempDir(), "inv.json", `{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z",
  "capabilities": {"api-usage": {"available": true}},
  "apiUsage": [{"group": "", "version": "v1", "kind": "Pod", "count": "3", "namespaces": {}}, {"group": "x", "kind": "Y", "count": 1, "namespaces": {}}]}`)
	r := runCLI(t, "eval", "--inventory", path, "--target", "1.37")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	for _, want := range []string{path, "/apiUsage/0/count: got string, want integer", "/apiUsage/1: missing property 'version'"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestSuppressionConfigIsAppliedAndValidatedWithLines(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m/ingress.yaml", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: shop\n  namespace: web\n")
	good := write(t, dir, "good.yaml", "ignore:\n  - key: removed-api/extensions/v1beta1/Ingress\n    reason: shop moves to Gateway API in Q1\n")
	r := runCLI(t, "scan", "--files", filepath.Join(dir, "m"), "--target", "1.37", "--config", good, "-o", "json", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d with the finding suppressed; stderr %s", r.code, r.stderr)
	}
	var rep struct {
		Targets []struct {
			Verdict         string
			SuppressedCount int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Targets[0].Verdict != "ready" || rep.Targets[0].SuppressedCount != 1 {
		t.Errorf("report %+v (%v), want ready with 1 suppressed", rep, err)
	}
	// .upgradescope.yaml beside the manifests is discovered.
	write(t, dir, "m/.upgradescope.yaml", "ignore:\n  - category: removed-api\n    reason: discovered\n")
	if r := runCLI(t, "scan", "--files", filepath.Join(dir, "m"), "--target", "1.37", pinned); r.code != 0 {
		t.Errorf("discovered config not applied: exit %d", r.code)
	}
	bad := map[string]string{
		"ignore:\n  - key: removed-api/x\n":                                           ":2: ignore rule needs a reason",
		"ignore:\n  - key: removed-api/x\n    category: removed-api\n    reason: r\n": ":2: ignore rule needs exactly one of key or category",
		"ignore:\n  - category: removed-api\n    reason: r\n    expires: soon\n":      `:2: expires "soon" is not a date`,
		"ignore:\n  - category: removed-api\n    reason: r\n    colour: red\n":        `:4: unknown field "colour"`,
		"ignores: []\n": `:1: unknown key "ignores"`,
		"ignore:\n  - category: removed-api\n    reason: r\n    file: '[a'\n": "file glob",
	}
	for content, want := range bad {
		p := write(t, dir, "bad.yaml", content)
		r := runCLI(t, "scan", "--files", filepath.Join(dir, "m"), "--target", "1.37", "--config", p)
		if r.code != 1 || !strings.Contains(r.stderr, p+want) && !strings.Contains(r.stderr, want) {
			t.Errorf("config %q: exit %d, stderr %q; want exit 1 naming %q", content, r.code, r.stderr, p+want)
		}
	}
}

func TestPolicyTestFailsLikeOPATest(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "upgradescope/custom/x/x.rego", "package upgradescope.custom.x\n\nfindings := set()\n")
	write(t, dir, "upgradescope/custom/x/x_test.rego", "package upgradescope.custom.x_test\n\nimport data.upgradescope.custom.x\n\ntest_fails if count(x.findings) == 1\n")
	r := runCLI(t, "policy", "test", dir)
	if r.code != 2 || !strings.Contains(r.stdout, "FAIL: 1/1") {
		t.Errorf("exit %d, stdout %q; want 2 and FAIL: 1/1", r.code, r.stdout)
	}
}

func TestScanFindsAddonsTeamsAndPlansInManifests(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ingress\n  labels: {owner: edge-team}\n")
	write(t, dir, "controller.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: ingress-nginx-controller, namespace: ingress}
spec:
  template:
    spec:
      containers:
      - name: controller
        image: registry.k8s.io/ingress-nginx/controller:v1.9.4
`)
	write(t, dir, "flow.yaml", "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata: {name: batch}\n")
	r := runCLI(t, "scan", "--files", dir, "--target", "1.33", "--team-label", "owner", "--fail-on", "never", pinned)
	for _, want := range []string{
		"[eol-addon] Ingress NGINX Controller is end-of-life since 2026-03-24",
		"Detected Ingress NGINX Controller 1.9.4 via image in namespace(s): ingress",
		"teams: edge-team",
		"TEAMS",
		"edge-team       75/100  blocked",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	plan := runCLI(t, "scan", "--files", dir, "--target", "1.33", "--plan", "--from", "1.30", "-o", "json", pinned)
	var rep struct {
		Plan []struct {
			From, To string
			New      []string
			Changed  []string
		}
		Targets []struct{ Target string }
	}
	if err := json.Unmarshal([]byte(plan.stdout), &rep); err != nil {
		t.Fatalf("plan output: %v\n%s", err, plan.stdout)
	}
	if len(rep.Plan) != 3 || rep.Plan[0].From != "1.30" || rep.Plan[2].To != "1.33" || len(rep.Targets) != 3 {
		t.Errorf("plan = %+v", rep.Plan)
	}
	if plan.code != 2 {
		t.Errorf("plan exit %d, want 2 (the destination is blocked)", plan.code)
	}
	if r := runCLI(t, "scan", "--files", dir, "--target", "1.33", "--plan", pinned); r.code != 1 || !strings.Contains(r.stderr, "--plan needs --from") {
		t.Errorf("plan without --from in files mode: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, "scan", "--files", dir, "--target", "1.33", "--plan", "--from", "1.30", "-o", "sarif", pinned); r.code != 1 || !strings.Contains(r.stderr, "renders as table or json") {
		t.Errorf("plan as sarif: exit %d, %s", r.code, r.stderr)
	}
}
