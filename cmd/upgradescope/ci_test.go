package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// The repository root: action.yml and ci/ live there, and CI runs from the checkout's root.
const repoRoot = "../.."

var ciScript = filepath.Join("ci", "upgradescope-ci.sh")

type actionStep struct {
	ID    string            `yaml:"id"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
}

type action struct {
	Inputs map[string]struct {
		Required bool    `yaml:"required"`
		Default  *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) action {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// scriptStep is the action's one step that runs the CI script.
func (a action) scriptStep(t *testing.T) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "ci/upgradescope-ci.sh") {
			return s
		}
	}
	t.Fatal("no step of action.yml runs ci/upgradescope-ci.sh")
	return actionStep{}
}

var (
	inputRef    = regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	scriptReads = regexp.MustCompile(`\$\{(UPGRADESCOPE_[A-Z_]+):-`)
	// The outputs the script writes: output NAME "$value", and the names it copies from
	// render --output outputs.
	scriptOutput  = regexp.MustCompile(`(?m)^\s*output ([a-z-]+) "`)
	scriptCopies  = regexp.MustCompile(`(?m)^\s*((?:[a-z]+ \| )*[a-z]+)\) output "\$\{kv%%=\*\}"`)
	stepOutputRef = regexp.MustCompile(`^\$\{\{ steps\.([a-z-]+)\.outputs\.([a-z-]+) \}\}$`)
)

// TestActionAndScriptAgreeOnInputsAndOutputs: action.yml parses, every input reaches the
// script through env (never through run:), and the outputs are the ones the script writes,
// so neither can drift from the other.
func TestActionAndScriptAgreeOnInputsAndOutputs(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q interpolates an expression into run: %q", s.ID, s.Run)
		}
	}
	for _, req := range []string{"path", "target"} {
		if !a.Inputs[req].Required {
			t.Errorf("input %s is not required", req)
		}
	}
	if d := a.Inputs["fail-on"].Default; d == nil || *d != "blocker" {
		t.Errorf("fail-on's default = %v, want blocker", d)
	}
	step := a.scriptStep(t)
	script, err := os.ReadFile(filepath.Join(repoRoot, ciScript))
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, m := range scriptReads.FindAllStringSubmatch(string(script), -1) {
		read[m[1]] = true
	}
	used := map[string]bool{}
	for env, value := range step.Env {
		m := inputRef.FindStringSubmatch(value)
		if value == "${{ github.action_ref }}" && read[env] {
			continue // the ref the Action was pinned at: what version follows by default
		}
		if m == nil {
			t.Errorf("env %s = %q, want ${{ inputs.NAME }} (or the Action's ref, read by the script)", env, value)
			continue
		}
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("env %s names input %s, which action.yml does not declare", env, m[1])
		}
		used[m[1]] = true
		if !read[env] {
			t.Errorf("env %s is set from input %s, but the script never reads it", env, m[1])
		}
	}
	for name := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s reaches the script through no env variable", name)
		}
	}
	written := map[string]bool{}
	for _, m := range scriptOutput.FindAllStringSubmatch(string(script), -1) {
		written[m[1]] = true
	}
	copies := scriptCopies.FindStringSubmatch(string(script))
	if copies == nil {
		t.Fatal("the script copies no output from render --output outputs")
	}
	for name := range strings.SplitSeq(copies[1], " | ") {
		written[name] = true
	}
	for name, o := range a.Outputs {
		m := stepOutputRef.FindStringSubmatch(o.Value)
		if m == nil || m[1] != step.ID || m[2] != name {
			t.Errorf("output %s = %q, want ${{ steps.%s.outputs.%s }}", name, o.Value, step.ID, name)
		}
		if !written[name] {
			t.Errorf("output %s is never written by the script", name)
		}
	}
	for name := range written {
		if _, ok := a.Outputs[name]; !ok {
			t.Errorf("the script writes output %s, which action.yml does not declare", name)
		}
	}
}

// actionRun is what one run of the action's step left behind.
type actionRun struct {
	code            int
	stdout, stderr  string
	outputs         map[string]string
	summary         string
	githubOutputRaw string
}

// runAction runs the action's script step as the runner would: its env: with each
// ${{ inputs.x }} replaced by inputs[x] or the input's default, GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY files, the freshly built binary first on PATH, from the checkout root.
func runAction(t *testing.T, inputs map[string]string) actionRun {
	t.Helper()
	return runActionEnv(t, inputs)
}

// runActionEnv is runAction with extra environment variables, which win over the runner's
// (PATH among them).
func runActionEnv(t *testing.T, inputs map[string]string, extra ...string) actionRun {
	t.Helper()
	buildBinary(t)
	a := readAction(t)
	step := a.scriptStep(t)
	tmp := t.TempDir()
	outFile, summaryFile := filepath.Join(tmp, "github_output"), filepath.Join(tmp, "step_summary")
	for _, f := range []string{outFile, summaryFile} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Dir(agentBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + tmp, "GITHUB_ACTIONS=true", "GITHUB_ACTION_PATH=" + root, "GITHUB_WORKSPACE=" + root,
		"GITHUB_OUTPUT=" + outFile, "GITHUB_STEP_SUMMARY=" + summaryFile, "RUNNER_TEMP=" + tmp,
	}
	for name, value := range step.Env {
		m := inputRef.FindStringSubmatch(value)
		if m == nil {
			env = append(env, name+"="+inputs["github.action_ref"])
			continue
		}
		input := m[1]
		v, ok := inputs[input]
		if !ok && a.Inputs[input].Default != nil {
			v = *a.Inputs[input].Default
		}
		env = append(env, name+"="+v)
	}
	env = append(env, extra...)
	cmd := exec.Command(step.Shell, "-e", "-c", step.Run)
	cmd.Dir, cmd.Env = root, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(outFile)
	summary, _ := os.ReadFile(summaryFile)
	return actionRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(),
		outputs: parseGitHubOutput(t, string(raw)), summary: string(summary), githubOutputRaw: string(raw)}
}

// parseGitHubOutput reads the file as the runner does: name=value or name<<DELIMITER lines.
func parseGitHubOutput(t *testing.T, raw string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(raw, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("GITHUB_OUTPUT: %s's delimiter %s never ends it", name, delim)
			}
			out[name] = strings.Join(value, "\n")
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		out[name] = value
	}
	return out
}

// checkActionRun asserts what a run against examples/manifests (blockers) leaves: exit 2,
// the outputs action.yml declares agreeing with the JSON report, a SARIF with results and the
// summary in the step summary. It answers the SARIF.
func checkActionRun(t *testing.T, r actionRun) []byte {
	t.Helper()
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (examples has blockers)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	a := readAction(t)
	if got, want := slices.Sorted(maps.Keys(r.outputs)), slices.Sorted(maps.Keys(a.Outputs)); !slices.Equal(got, want) {
		t.Errorf("outputs written %v, action.yml declares %v", got, want)
	}
	data, err := os.ReadFile(r.outputs["report-json"])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Targets []struct {
			Verdict  string `json:"verdict"`
			Score    int    `json:"score"`
			Blockers int    `json:"blockers"`
			Warnings int    `json:"warnings"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Targets) != 1 {
		t.Fatalf("report-json: %v, %d targets", err, len(rep.Targets))
	}
	tr := rep.Targets[0]
	want := map[string]string{"verdict": "blocked", "ready": "false", "score": strconv.Itoa(tr.Score), "blockers": strconv.Itoa(tr.Blockers), "warnings": strconv.Itoa(tr.Warnings)}
	if tr.Verdict != "blocked" || tr.Blockers == 0 {
		t.Errorf("the report says %s with %d blockers, want blocked with some", tr.Verdict, tr.Blockers)
	}
	for k, v := range want {
		if r.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, r.outputs[k], v)
		}
	}
	sarif, err := os.ReadFile(r.outputs["sarif-file"])
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 {
		t.Errorf("sarif-file is not a SARIF 2.1.0 log with results: %v\n%s", err, sarif)
	}
	summary, err := os.ReadFile(r.outputs["summary-file"])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.summary, "### ⛔ Kubernetes 1.37: BLOCKED") || r.summary != string(summary) {
		t.Errorf("step summary:\n%s\nwant the summary file's markdown:\n%s", r.summary, summary)
	}
	// Commands are stopped while upgradescope runs, so what it prints is never a command.
	if !regexp.MustCompile(`(?m)^::stop-commands::([0-9a-f]{32})\n(?:.*\n)*?::([0-9a-f]{32})::$`).MatchString(r.stdout) {
		t.Errorf("stdout does not stop workflow commands around upgradescope:\n%s", r.stdout)
	}
	return sarif
}

// TestActionGatesManifests runs the action without a server and with a real serve: the same manifests give the same
// outputs and the same SARIF, judged on the runner or by a real serve.
func TestActionGatesManifests(t *testing.T) {
	local := runAction(t, map[string]string{"path": "examples/manifests", "target": "1.37", "version": "preinstalled"})
	localSARIF := checkActionRun(t, local)

	dir := t.TempDir()
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--read-token-file", writeSecret(t, dir, "read", gateReadToken))
	remote := runAction(t, map[string]string{"path": "examples/manifests", "target": "1.37", "version": "preinstalled",
		"server": p.url, "read-token": gateReadToken})
	remoteSARIF := checkActionRun(t, remote)
	if !bytes.Equal(localSARIF, remoteSARIF) {
		t.Errorf("the server's judgement renders another SARIF:\n%s\nthan the runner's:\n%s", remoteSARIF, localSARIF)
	}
	for _, k := range []string{"verdict", "score", "blockers", "warnings"} {
		if local.outputs[k] != remote.outputs[k] {
			t.Errorf("output %s: %q on the runner, %q from the server", k, local.outputs[k], remote.outputs[k])
		}
	}
	if strings.Contains(remote.stdout+remote.stderr+remote.githubOutputRaw, gateReadToken) {
		t.Error("the read token was printed")
	}

	t.Run("a refused request fails the step as an error", func(t *testing.T) {
		r := runAction(t, map[string]string{"path": "examples/manifests", "target": "1.37", "version": "preinstalled", "server": p.url})
		if r.code != 1 || !strings.Contains(r.stderr, "401 Unauthorized") || len(r.outputs) != 0 {
			t.Errorf("exit %d, outputs %v, stderr:\n%s", r.code, r.outputs, r.stderr)
		}
	})
}

func TestCIScriptRefusesBadInputsNamingThem(t *testing.T) {
	for _, tt := range []struct {
		name   string
		inputs map[string]string
		stderr string
	}{
		{"no path", map[string]string{"path": ""}, "path is required"},
		{"no target", map[string]string{"target": ""}, "target is required"},
		{"a version that is no release", map[string]string{"version": "v1;rm -rf /\n::error::x"}, `version "v1;rm -rf / ::error::x": want preinstalled, latest, a release such as v0.3.0, a commit or a branch`},
		{"a release followed by a second line", map[string]string{"version": "v0.3.0\n::error::injected"}, `version "v0.3.0 ::error::injected": want preinstalled`},
		{"an Action ref that is no ref", map[string]string{"version": "", "github.action_ref": "main; curl evil"}, `the Action's ref "main; curl evil": want preinstalled`},
		{"an install that is no way to install", map[string]string{"install": "fast"}, `install "fast": want auto, release or source`},
		{"a release URL that is no URL", map[string]string{"release-url": "file:///etc"}, `release-url "file:///etc": want an http(s) URL`},
		{"allow-incomplete not a bool", map[string]string{"allow-incomplete": "yes"}, `allow-incomplete "yes": want true or false`},
		{"a cluster without a server", map[string]string{"cluster": "prod"}, `cluster "prod" needs server`},
		{"a token without a server", map[string]string{"read-token": "secret-token"}, "read-token is set but server is not"},
		{"an invalid target", map[string]string{"target": "1.x"}, `invalid Kubernetes version "1.x"`},
		{"a missing path", map[string]string{"path": "no/such/dir"}, "no/such/dir"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inputs := map[string]string{"path": "examples/manifests", "target": "1.37", "version": "preinstalled"}
			maps.Copy(inputs, tt.inputs)
			r := runAction(t, inputs)
			if r.code != 1 || !strings.Contains(r.stderr, tt.stderr) || len(r.outputs) != 0 {
				t.Errorf("exit %d, outputs %v, stderr %q; want 1, none and %q", r.code, r.outputs, r.stderr, tt.stderr)
			}
			if strings.Contains(r.stderr, "secret-token") {
				t.Error("the token was printed")
			}
		})
	}
}

// gitLabJob is the template's hidden job, as GitLab reads it.
type gitLabJob struct {
	Image     string            `yaml:"image"`
	Variables map[string]string `yaml:"variables"`
	Script    []string          `yaml:"script"`
	Artifacts struct {
		When    string            `yaml:"when"`
		Reports map[string]string `yaml:"reports"`
	} `yaml:"artifacts"`
}

func readGitLabJob(t *testing.T) gitLabJob {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "ci", "gitlab", "upgradescope.gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl map[string]gitLabJob
	if err := yaml.Unmarshal(data, &tmpl); err != nil {
		t.Fatalf("upgradescope.gitlab-ci.yml: %v", err)
	}
	job, ok := tmpl[".upgradescope"]
	if !ok {
		t.Fatal("no .upgradescope job template")
	}
	return job
}

// runGitLabJob runs the job's script as the runner would, from a directory holding a copy of
// the checkout's manifests as rendered/, with the job's variables, then extra (which win). It
// answers the exit code, the combined output and the directory.
func runGitLabJob(t *testing.T, job gitLabJob, extra ...string) (int, string, string) {
	t.Helper()
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "rendered"), os.DirFS(filepath.Join(repoRoot, "examples", "manifests"))); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs(repoRoot)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	env = append(env, "UPGRADESCOPE_PATH=rendered", "UPGRADESCOPE_TARGET=1.37",
		"UPGRADESCOPE_CI_SCRIPT="+filepath.Join(root, ciScript))
	env = append(env, extra...)
	cmd := exec.Command("sh", "-e", "-c", strings.Join(job.Script, "\n"))
	cmd.Dir, cmd.Env = work, env
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out), work
}

// The template's image: the Go image, by tag until the release process pins its digest.
var gitLabGoImage = regexp.MustCompile(`^golang:1\.26(@sha256:[0-9a-f]{64})?$`)

// TestGitLabTemplateRunsTheCIScript: the template's variables are the script's, its reports
// are the files the script writes, and its script, run as a job would, gates examples.
func TestGitLabTemplateRunsTheCIScript(t *testing.T) {
	buildBinary(t)
	job := readGitLabJob(t)
	if job.Image != "$UPGRADESCOPE_GO_IMAGE" || !gitLabGoImage.MatchString(job.Variables["UPGRADESCOPE_GO_IMAGE"]) {
		t.Errorf("image %q with UPGRADESCOPE_GO_IMAGE %q, want $UPGRADESCOPE_GO_IMAGE, golang:1.26 or golang:1.26@sha256:<digest>",
			job.Image, job.Variables["UPGRADESCOPE_GO_IMAGE"])
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, ciScript))
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, m := range scriptReads.FindAllStringSubmatch(string(script), -1) {
		read[m[1]] = true
	}
	for name := range job.Variables {
		if !read[name] && name != "UPGRADESCOPE_CI_SCRIPT" && name != "UPGRADESCOPE_GO_IMAGE" {
			t.Errorf("variable %s is not the script's", name)
		}
	}
	for name := range read {
		// The token is a masked CI/CD variable, never a value in a file; the Action's ref is
		// GitHub's alone.
		if _, ok := job.Variables[name]; !ok && name != "UPGRADESCOPE_READ_TOKEN" && name != "UPGRADESCOPE_ACTION_REF" {
			t.Errorf("the script reads %s, which the template does not declare", name)
		}
	}
	outDir := job.Variables["UPGRADESCOPE_OUTPUT_DIR"]
	if job.Artifacts.When != "always" || job.Artifacts.Reports["codequality"] != outDir+"/gl-code-quality-report.json" || job.Artifacts.Reports["junit"] != outDir+"/junit.xml" {
		t.Errorf("artifacts %+v, want codequality and junit from %s, always", job.Artifacts, outDir)
	}

	code, out, work := runGitLabJob(t, job, "PATH="+filepath.Dir(agentBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"UPGRADESCOPE_VERSION=preinstalled")
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	checkGitLabReports(t, job, work)
}

// checkGitLabReports asserts the reports a job that gated examples leaves: Code Quality
// issues on rendered/ and a JUnit failure.
func checkGitLabReports(t *testing.T, job gitLabJob, work string) {
	t.Helper()
	var issues []struct {
		CheckName string `json:"check_name"`
		Location  struct {
			Path string `json:"path"`
		} `json:"location"`
	}
	cq, err := os.ReadFile(filepath.Join(work, job.Artifacts.Reports["codequality"]))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cq, &issues); err != nil || len(issues) == 0 || !strings.HasPrefix(issues[0].Location.Path, "rendered/") {
		t.Errorf("the Code Quality report has no issue on rendered/: %v\n%s", err, cq)
	}
	junit, err := os.ReadFile(filepath.Join(work, job.Artifacts.Reports["junit"]))
	if err != nil || !bytes.Contains(junit, []byte("<testsuites")) || !bytes.Contains(junit, []byte("<failure")) {
		t.Errorf("the JUnit report has no failure: %v\n%s", err, junit)
	}
}
