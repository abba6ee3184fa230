package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
)

// The chart's templates start with "{{- if": they are unrendered templates, skipped with a
// warning, not JSON that failed to decode. One of an API the knowledge base judges (the
// server's Ingress and PodDisruptionBudget) is not assessed, so the verdict is unknown and
// says how many; one of an API it does not judge is only a warning.
func TestScanOfTheUnrenderedChartSkipsTemplatesAndLeavesTheJudgedOnesNotAssessed(t *testing.T) {
	r := runCLI(t, "scan", "--files", "../../deploy/chart/upgradescope", "--target", "1.37", "-o", "json", "--fail-on", "never", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Targets []struct {
			Verdict     string `json:"verdict"`
			NotAssessed []struct {
				Capability string `json:"capability"`
				Reason     string `json:"reason"`
			} `json:"notAssessed"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	gaps := map[string]string{}
	for _, g := range rep.Targets[0].NotAssessed {
		gaps[g.Capability] = g.Reason
	}
	// the Ingress and the PodDisruptionBudget, judged by the knowledge base; the Certificate,
	// the PrometheusRule and the ServiceMonitor, custom resources the CRD rules judge
	if v := rep.Targets[0].Verdict; v != "unknown" || gaps["api-usage"] != "5 document(s) could not be decoded" {
		t.Errorf("verdict %s, api-usage gap %q; want unknown for the 5 unrendered templates of judged APIs", v, gaps["api-usage"])
	}
	for _, want := range []string{
		"templates/agent-bundle-key.yaml:1: unrendered template skipped",
		"templates/server-ingress.yaml:1: unrendered template of networking.k8s.io/v1 Ingress, an API the knowledge base judges",
		`templates/server-certificate.yaml:1: unrendered template of "cert-manager.io/v1" "Certificate", which the rules for custom resources and unknown APIs judge`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "invalid JSON") {
		t.Errorf("an unrendered template was read as JSON:\n%s", r.stderr)
	}
}

// make build stamps the version and commit (buildBinary builds through it); an unstamped
// build, as go run and these tests are, says dev.
func TestMakeBuildStampsTheVersionAndCommit(t *testing.T) {
	buildBinary(t)
	out, err := exec.Command(agentBin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != builtVersion || v.Commit != builtCommit {
		t.Errorf("version %q commit %q; want %q and %q", v.Version, v.Commit, builtVersion, builtCommit)
	}
	if r := runCLI(t, "version"); !strings.HasPrefix(r.stdout, "upgradescope dev\ncommit:     ") {
		t.Errorf("an unstamped build says:\n%s", r.stdout)
	}
}

// Without a kubeconfig (an empty HOME, no KUBECONFIG) and outside a pod, a live command says
// what to pass instead of client-go's "try setting KUBERNETES_MASTER". The binary runs in its
// own environment: client-go reads HOME once, at start.
func TestLiveCommandsWithoutAKubeconfigSayWhatToPass(t *testing.T) {
	buildBinary(t)
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "HOME" && name != "KUBECONFIG" && name != "KUBERNETES_SERVICE_HOST" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	tests := []struct {
		name     string
		args     []string
		want     []string
		wantNone []string
	}{
		{name: "scan offers --files", args: []string{"scan", "--target", "1.37"},
			want: []string{"no cluster to read", home + "/.kube/config", "--kubeconfig FILE", "--context NAME", "--files PATH"}},
		{name: "scan with only --context says the same", args: []string{"scan", "--target", "1.37", "--context", "prod"},
			want: []string{"no cluster to read", home + "/.kube/config", "--kubeconfig FILE", "--files PATH"}},
		{name: "inventory offers --files", args: []string{"inventory"},
			want: []string{"no cluster to read", "--kubeconfig FILE", "--context NAME", "--files PATH"}},
		{name: "agent says it runs in a pod and offers no --files", args: []string{"agent", "--manage-crd=false"},
			want: []string{"no cluster to read", "--kubeconfig FILE", "--context NAME", "run in a pod"}, wantNone: []string{"--files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(agentBin, tt.args...)
			cmd.Env = env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitErr {
				t.Errorf("exit %v, want 1", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			for _, w := range append(tt.wantNone, "KUBERNETES_MASTER") {
				if strings.Contains(stderr.String(), w) {
					t.Errorf("stderr says %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// --plan with a format that cannot show a plan is refused before anything is read: the
// manifests and the inventory below do not exist, and the error is about the format.
func TestPlanInAFormatWithoutPlansIsRefusedBeforeReadingAnything(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "--files", "/nonexistent", "--target", "1.33", "--plan", "--from", "1.30", "-o", "sarif"},
		{"scan", "--files", "/nonexistent", "--target", "1.33", "--plan", "--from", "1.30", "-o", "junit"},
		{"eval", "--inventory", "/nonexistent.json", "--target", "1.33", "--plan", "-o", "sarif"},
	} {
		r := runCLI(t, args...)
		if r.code != exitErr || !strings.Contains(r.stderr, "renders as table or json") || strings.Contains(r.stderr, "nonexistent") {
			t.Errorf("%v: exit %d, stderr %q; want 1 refusing the format before reading", args, r.code, r.stderr)
		}
	}
}

func TestBundleServeRefusesAMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "bundels")
	file := write(t, t.TempDir(), "kb.tar.gz", "not a directory")
	for _, dir := range []string{missing, file} {
		r := runCLI(t, "bundle", "serve", dir, "--listen", "127.0.0.1:0")
		if r.code != exitErr || !strings.Contains(r.stderr, dir) {
			t.Errorf("serve %s: exit %d, stderr %q; want 1 naming it", dir, r.code, r.stderr)
		}
	}
}

// bundle serve warns when it listens beyond loopback without a token, and only then.
func TestBundleServeWarnsOnANonLoopbackAddressWithoutAToken(t *testing.T) {
	token := write(t, t.TempDir(), "token", "s3cret\n")
	tests := []struct {
		name string
		args []string
		warn bool
	}{
		{name: "all interfaces without a token warn", args: []string{"--listen", "0.0.0.0:0"}, warn: true},
		{name: "all interfaces with a token do not", args: []string{"--listen", "0.0.0.0:0", "--bundle-token-file", token}},
		{name: "loopback without a token does not", args: []string{"--listen", "127.0.0.1:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr := serveUntilListening(t, append([]string{t.TempDir()}, tt.args...))
			if warned := strings.Contains(stderr, "warning: serving on") && strings.Contains(stderr, "without --bundle-token-file"); warned != tt.warn {
				t.Errorf("warned = %v, want %v; stderr:\n%s", warned, tt.warn, stderr)
			}
		})
	}
}

// serveUntilListening runs `bundle serve args…` until it says it is serving, stops it, and
// returns what it wrote to stderr.
func serveUntilListening(t *testing.T, args []string) string {
	t.Helper()
	var stderr syncbuf.Buffer
	cmd := newBundleServeCommand(streams{in: strings.NewReader(""), out: io.Discard, err: &stderr})
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "serving bundles") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	return stderr.String()
}

// The key and algorithm flags have one spelling everywhere, OPA's; the old ones still work,
// hidden, with a warning on stderr that leaves the report on stdout alone.
func TestKeyFlagsHaveOneSpellingAndTheOldOnesStillWork(t *testing.T) {
	dir := t.TempDir()
	private, public := writeRSAKeys(t, dir)
	_, signed := kbBundle(t, dir, private, "2027-01-05.1", "1.36")
	scan := func(keyFlags ...string) []string {
		return append([]string{"scan", "--files", examples, "--target", "1.36", "--fail-on", "never", "-o", "json", pinned, "--bundle", signed}, keyFlags...)
	}
	tests := []struct {
		name    string
		args    []string
		stdout  string
		warning string
		noWarn  bool
	}{
		{name: "verify takes --verification-key and --signing-alg", args: []string{"bundle", "verify", signed, "--verification-key", public, "--signing-alg", "RS256"},
			stdout: "signature verified", noWarn: true},
		{name: "verify still takes --key and --alg", args: []string{"bundle", "verify", signed, "--key", public, "--alg", "RS256"},
			stdout: "signature verified", warning: "warning: --key is deprecated; use --verification-key"},
		{name: "scan takes --verification-key and --signing-alg", args: scan("--verification-key", public, "--signing-alg", "RS256"),
			stdout: `"schemaVersion"`, noWarn: true},
		{name: "scan still takes --bundle-verification-key and --bundle-verification-alg", args: scan("--bundle-verification-key", public, "--bundle-verification-alg", "RS256"),
			stdout: `"schemaVersion"`, warning: "warning: --bundle-verification-alg is deprecated; use --signing-alg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.args...)
			if r.code != 0 || !strings.Contains(r.stdout, tt.stdout) {
				t.Fatalf("exit %d, stdout lacks %q; stderr %q", r.code, tt.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "is deprecated; use") || tt.noWarn && r.stderr != "" || !strings.Contains(r.stderr, tt.warning) {
				t.Errorf("stderr %q; want the warning %q, on stderr only", r.stderr, tt.warning)
			}
		})
	}
	// Help names only the new spellings.
	for _, cmd := range [][]string{{"bundle", "verify"}, {"scan"}, {"eval"}, {"agent"}, {"inventory"}, {"version"}} {
		help := runCLI(t, append(cmd, "--help")...).stdout
		if !strings.Contains(help, "--verification-key") || !strings.Contains(help, "--signing-alg") ||
			strings.Contains(help, "--bundle-verification") || strings.Contains(help, "--key ") || strings.Contains(help, "--alg ") {
			t.Errorf("%v --help:\n%s", cmd, help)
		}
	}
}

// No command's help shows a bool flag as "--plan[=true|false]", and bool flags still parse
// bare and as --flag=false.
func TestHelpShowsBoolFlagsWithoutValueNoise(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRootCommand(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}), nil)
	if len(paths) < 10 {
		t.Fatalf("walked only %v", paths)
	}
	paths = append(paths, []string{"completion", "bash"}) // cobra's, added at execution otherwise
	for _, path := range paths {
		r := runCLI(t, append(path, "--help")...)
		if r.code != 0 || strings.Contains(r.stdout, "[=") || !strings.Contains(r.stdout, "  -h, --help ") {
			t.Errorf("%v --help: exit %d\n%s", path, r.code, r.stdout)
		}
	}
	if help := runCLI(t, "scan", "--help").stdout; !strings.Contains(help, "      --plan  ") || !strings.Contains(help, "      --allow-incomplete  ") {
		t.Errorf("scan --help:\n%s", help)
	}
	if help := runCLI(t, "agent", "--help").stdout; !strings.Contains(help, "      --manage-crd  ") || !strings.Contains(help, "(default true)") {
		t.Errorf("agent --help:\n%s", help)
	}
	// A document that cannot be decoded makes the verdict unknown, which only --allow-incomplete passes.
	broken := t.TempDir()
	write(t, broken, "ok.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n")
	write(t, broken, "bad.yaml", "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: x: y\n")
	for _, tt := range []struct {
		flag string
		code int
	}{{"--allow-incomplete", 0}, {"--allow-incomplete=true", 0}, {"--allow-incomplete=false", 2}} {
		if r := runCLI(t, "scan", "--files", broken, "--target", "1.37", tt.flag, pinned); r.code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s", tt.flag, r.code, tt.code, r.stderr)
		}
	}
}

// Shell completion (cobra's __complete, what the generated scripts call) offers the values of
// flags that take one of a few.
func TestShellCompletionOffersFlagValues(t *testing.T) {
	kubeconfig := write(t, t.TempDir(), "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: prod, context: {cluster: c, user: u}}, {name: dev, context: {cluster: c, user: u}}]
current-context: dev
`)
	noFiles := ":4" // cobra.ShellCompDirectiveNoFileComp
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "scan --output", args: []string{"scan", "--output", ""}, want: []string{"table", "json", "sarif", "junit", "markdown", "gitlab-codequality", noFiles}},
		{name: "scan -o", args: []string{"scan", "-o", "s"}, want: []string{"table", "json", "sarif", "junit", "markdown", "gitlab-codequality", noFiles}},
		{name: "gate --output", args: []string{"gate", "--output", ""}, want: []string{"table", "json", "sarif", "junit", "markdown", "gitlab-codequality", noFiles}},
		{name: "render --output", args: []string{"render", "--output", ""}, want: []string{"table", "json", "sarif", "junit", "markdown", "gitlab-codequality", "outputs", noFiles}},
		{name: "eval --fail-on", args: []string{"eval", "--fail-on", ""}, want: []string{"blocker", "warning", "never", noFiles}},
		{name: "scan --fail-on", args: []string{"scan", "--fail-on", ""}, want: []string{"blocker", "warning", "never", noFiles}},
		{name: "version --output", args: []string{"version", "--output", ""}, want: []string{"text", "json", noFiles}},
		{name: "agent --log-format", args: []string{"agent", "--log-format", ""}, want: []string{"text", "json", noFiles}},
		{name: "agent --log-level", args: []string{"agent", "--log-level", ""}, want: []string{"debug", "info", "warn", "error", noFiles}},
		{name: "scan --signing-alg", args: []string{"scan", "--signing-alg", ""}, want: append(append([]string(nil), signingAlgs...), noFiles)},
		{name: "bundle verify --signing-alg", args: []string{"bundle", "verify", "--signing-alg", ""}, want: append(append([]string(nil), signingAlgs...), noFiles)},
		{name: "bundle sign --signing-alg", args: []string{"bundle", "sign", "--signing-alg", ""}, want: append(append([]string(nil), signingAlgs...), noFiles)},
		{name: "scan --context names the kubeconfig's contexts", args: []string{"scan", "--kubeconfig", kubeconfig, "--context", ""}, want: []string{"dev", "prod", noFiles}},
		{name: "bundle serve DIR offers directories", args: []string{"bundle", "serve", ""}, want: []string{":16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"__complete"}, tt.args...)...)
			if got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); r.code != 0 || !slices.Equal(got, tt.want) {
				t.Errorf("exit %d, completions %q; want %q", r.code, got, tt.want)
			}
		})
	}
}

// --timeout bounds the whole live collection. An API server that accepts requests and never
// answers them makes a scan with --timeout 1ms fail at once, saying what ran out and what to
// do, where --request-timeout alone would wait a minute per step.
func TestLiveScanPastItsTimeoutFailsClearly(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer silent.Close()
	kubeconfig := write(t, t.TempDir(), "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "`+silent.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: silent, context: {cluster: silent, user: u}}]
current-context: silent
`)
	for _, cmd := range [][]string{{"scan", "--target", "1.37"}, {"inventory"}} {
		start := time.Now()
		r := runCLI(t, append(cmd, "--kubeconfig", kubeconfig, "--timeout", "1ms", "--request-timeout", "30s")...)
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%v took %s", cmd, took)
		}
		if r.code != exitErr || !strings.Contains(r.stderr, "did not finish within --timeout 1ms") || !strings.Contains(r.stderr, "raise --timeout") {
			t.Errorf("%v: exit %d, stderr %q; want 1 naming --timeout", cmd, r.code, r.stderr)
		}
	}
	if help := runCLI(t, "scan", "--help").stdout; !strings.Contains(help, "--timeout duration") || !strings.Contains(help, "(default 5m0s)") {
		t.Errorf("scan --help lacks --timeout with its 5m default:\n%s", help)
	}
}

// A live collection's steps read as what each found, or what kept it from seeing everything.
func TestCollectorStepsShowWhatTheyFoundOrWhyNot(t *testing.T) {
	tests := []struct {
		name string
		step cluster.Step
		want string
	}{
		{name: "a step that saw everything counts what it found",
			step: cluster.Step{Name: "api-usage", Index: 3, Total: 8, Done: true, Found: 212, Unit: "objects at flagged APIs", Capability: &inventory.Capability{Available: true}},
			want: "[3/8] api-usage: 212 objects at flagged APIs\n"},
		{name: "a partial step says why",
			step: cluster.Step{Name: "helm", Index: 7, Total: 8, Done: true, Found: 2, Unit: "Helm releases", Capability: &inventory.Capability{Available: true, Partial: true, Reason: "1 release could not be decoded"}},
			want: "[7/8] helm: 2 Helm releases (partial: 1 release could not be decoded)\n"},
		{name: "an unavailable step says it was not assessed",
			step: cluster.Step{Name: "crds", Index: 6, Total: 8, Done: true, Unit: "CRDs", Capability: &inventory.Capability{Reason: "crds: forbidden"}},
			want: "[6/8] crds: not assessed: crds: forbidden\n"},
		{name: "gitops has no capability of its own",
			step: cluster.Step{Name: "gitops", Index: 8, Total: 8, Done: true, Found: 1, Unit: "Argo CD and Flux charts"},
			want: "[8/8] gitops: 1 Argo CD and Flux charts\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var term strings.Builder
			rep := progress.New(&term)
			start := tt.step
			start.Done, start.Capability = false, nil
			showStep(rep)(start)
			showStep(rep)(tt.step)
			rep.Close()
			if !strings.HasSuffix(term.String(), tt.want) {
				t.Errorf("terminal shows %q, want it to end with %q", term.String(), tt.want)
			}
		})
	}
}
