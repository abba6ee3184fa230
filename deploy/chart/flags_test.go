package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary builds cmd/upgradescope once per test run, outside the repository.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "upgradescope-chart-test-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "upgradescope")
		out, err := exec.Command("go", "build", "-o", built.path, "../../cmd/upgradescope").CombinedOutput()
		if err != nil {
			built.err = &buildError{err: err, out: string(out)}
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "go build ./cmd/upgradescope: " + e.err.Error() + "\n" + e.out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

var helpFlag = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)

// flagsOf answers the flags `upgradescope <command> --help` lists.
func flagsOf(t *testing.T, command string) map[string]bool {
	t.Helper()
	out, err := exec.Command(binary(t), command, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("upgradescope %s --help: %v\n%s", command, err, out)
	}
	flags := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) < 10 {
		t.Fatalf("upgradescope %s --help lists %d flags: the help format changed?\n%s", command, len(flags), out)
	}
	return flags
}

// containerArgs answers every container's args in the render, by container name.
func containerArgs(t *testing.T, rendered string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, obj := range objects(t, rendered) {
		if obj["kind"] != "Deployment" {
			continue
		}
		spec := dig(obj, "spec", "template", "spec")
		for _, c := range spec["containers"].([]any) {
			c := c.(map[string]any)
			out[c["name"].(string)] = strs(c["args"])
		}
	}
	return out
}

func dig(obj map[string]any, path ...string) map[string]any {
	for _, p := range path {
		obj, _ = obj[p].(map[string]any)
	}
	return obj
}

func TestEveryFlagTheChartPassesExistsOnTheBinary(t *testing.T) {
	known := map[string]map[string]bool{"agent": flagsOf(t, "agent"), "serve": flagsOf(t, "serve")}
	cases := map[string]string{
		"bundles": `
bundles:
  urls: ["https://bundles.example/kb.tar.gz"]
  verificationKey: "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n"
  tokenSecret: {name: bundle-token}
agent: {targets: ["1.37"], clusterName: prod, serverUrl: "https://hub.example.com", serverTokenSecret: {name: t}, serverCA: {secret: ca}}`,
		"anonymous":       `server: {enabled: true, ingestToken: ingest-token-0123456789, allowAnonymousRead: true}`,
		"kubelet-configz": `rbac: {kubeletConfigz: true}`,
		"chart-advice":    `agent: {adviseCharts: true, chartRepositories: {ingress-nginx: "https://kubernetes.github.io/ingress-nginx", karpenter: "oci://public.ecr.aws/karpenter"}}`,
	}
	for _, g := range goldens {
		cases[g.name] = g.values
	}
	seen := map[string]bool{}
	for name, v := range cases {
		for container, args := range containerArgs(t, render(t, values(t, v))) {
			command := args[0]
			if known[command] == nil {
				t.Errorf("%s: container %s runs %q, not agent or serve", name, container, command)
				continue
			}
			for _, arg := range args[1:] {
				flag, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
				if !strings.HasPrefix(arg, "--") || !known[command][flag] {
					t.Errorf("%s: `upgradescope %s` has no flag %q", name, command, arg)
				}
				seen[command+" --"+flag] = true
			}
		}
	}
	// The renders above exercised the flags that matter most.
	for _, want := range []string{"serve --require-read-credential", "serve --read-token-file", "serve --db-url-file", "serve --db",
		"serve --tls-cert-file", "serve --allow-anonymous-read", "agent --server", "agent --server-ca-file", "agent --bundle-url", "agent --kubelet-configz", "agent --audit-log", "agent --audit-since"} {
		if !seen[want] {
			t.Errorf("no render passed %s", want)
		}
	}
}
