package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/report"
)

// mcpNow pins the clock of every mcp run and of the CLI runs its answers are held to.
const mcpNow = "2026-12-01T12:00:00Z"

// A configuration mcp cannot run safely, or cannot run at all, is refused at start: exit 1,
// naming the flag to change, and never a listening line.
func TestMCPRefusesBadFlagsAtStart(t *testing.T) {
	t.Setenv("UPGRADESCOPE_MCP_TOKEN", "")
	empty := write(t, t.TempDir(), "empty.token", "\n")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"every interface without --allow-remote", []string{"--http", "0.0.0.0:8765"}, []string{`--http "0.0.0.0:8765" binds beyond this machine`, "--allow-remote"}},
		{"a private address without --allow-remote", []string{"--http", "10.0.0.1:8765"}, []string{"--allow-remote"}},
		{"an empty host with a port is every interface, not loopback", []string{"--http", "[::]:8765"}, []string{"--allow-remote"}},
		{"a remote address allowed but without a token", []string{"--http", "0.0.0.0:8765", "--allow-remote"}, []string{"reachable from other machines", "--http-token-file"}},
		{"--allow-remote without --http", []string{"--allow-remote"}, []string{"--allow-remote applies to --http"}},
		{"a token file that holds no token, as an unmounted Secret", []string{"--http", "0", "--http-token-file", empty}, []string{"--http-token-file " + empty + " holds no token"}},
		{"an address that is no address", []string{"--http", "here"}, []string{`--http "here": want a port or HOST:PORT`}},
		{"a port that is no number", []string{"--http", "127.0.0.1:http"}, []string{"the port must be a number"}},
		{"a root that does not exist", []string{"--root", "/nonexistent/upgradescope"}, []string{"--root /nonexistent/upgradescope: no such directory"}},
		{"a root that is a file", []string{"--root", "mcp_test.go"}, []string{"--root mcp_test.go: not a directory"}},
		{"no slot for any tool call", []string{"--max-concurrent", "0"}, []string{"--max-concurrent 0: want at least 1"}},
		{"a negative files budget", []string{"--files-max-mib", "-1"}, []string{"--files-max-mib -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"mcp", "--no-cluster"}, tt.args...)...)
			if r.code != exitErr || strings.Contains(r.stderr, "serving") || r.stdout != "" {
				t.Fatalf("exit %d, want 1 before serving; stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// mcpProc is an `upgradescope mcp --http` child process.
type mcpProc struct {
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
	url  string // as the process printed it
}

var servingLine = regexp.MustCompile(`serving (http://\S+)`)

// startMCPHTTP runs the binary's mcp with args and waits for its serving line; the process
// is killed when the test ends. A child, not run(): only a signal stops the server, and one
// sent to the test binary would reach every command it runs.
func startMCPHTTP(t *testing.T, args ...string) *mcpProc {
	t.Helper()
	buildBinary(t)
	p := &mcpProc{logs: &syncbuf.Buffer{}}
	p.cmd = exec.Command(agentBin, append([]string{"mcp", "--no-cluster", "--root", "../.."}, args...)...)
	p.cmd.Env = append(serveEnv(), "UPGRADESCOPE_MCP_TOKEN=")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-done
	})
	deadline := time.After(serveStartTimeout)
	for {
		if m := servingLine.FindStringSubmatch(p.logs.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-done:
			t.Fatalf("mcp exited before serving:\n%s", p.logs.String())
		case <-deadline:
			t.Fatalf("mcp did not serve within %s:\n%s", serveStartTimeout, p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// listTools connects the SDK client to endpoint (with token, unless "") and lists the tools.
func listTools(endpoint, token string) ([]*mcp.Tool, error) {
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearerTransport(token)}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	return res.Tools, nil
}

// A bare port binds 127.0.0.1, as the serving line says, and answers there.
func TestMCPOnABarePortListensOnLoopback(t *testing.T) {
	for _, addr := range []string{"0", ":0"} {
		t.Run(addr, func(t *testing.T) {
			p := startMCPHTTP(t, "--http", addr)
			if !strings.HasPrefix(p.url, "http://127.0.0.1:") || !strings.HasSuffix(p.url, mcpserver.Path) {
				t.Fatalf("serving %s, want http://127.0.0.1:PORT%s", p.url, mcpserver.Path)
			}
			if tools, err := listTools(p.url, ""); err != nil || len(tools) == 0 {
				t.Errorf("tools/list at %s: %v, %v", p.url, tools, err)
			}
		})
	}
}

// Off loopback, with --allow-remote and a token file, the server starts on every interface
// and answers only requests carrying the token.
func TestMCPOffLoopbackAnswersOnlyTheToken(t *testing.T) {
	tokenFile := writeSecret(t, t.TempDir(), "mcp.token", "mcp-s3cret")
	p := startMCPHTTP(t, "--http", "0.0.0.0:0", "--allow-remote", "--http-token-file", tokenFile)
	u, err := url.Parse(p.url)
	if err != nil || u.Hostname() != "0.0.0.0" && u.Hostname() != "::" {
		t.Fatalf("serving %s, want every interface", p.url)
	}
	local := "http://127.0.0.1:" + u.Port() + mcpserver.Path
	if _, err := listTools(local, ""); err == nil {
		t.Error("answered a client without the token")
	}
	if _, err := listTools(local, "mcp-s3cret-not"); err == nil {
		t.Error("answered a client with another token")
	}
	if tools, err := listTools(local, "mcp-s3cret"); err != nil || len(tools) == 0 {
		t.Errorf("with the token: %v, %v", tools, err)
	}
	if strings.Contains(p.logs.String(), "mcp-s3cret") {
		t.Errorf("the output shows the token:\n%s", p.logs.String())
	}
}

// stdioMCP is `upgradescope mcp` run in-process through run() on pipes, as an assistant
// starts it, with the SDK's client on the other end.
type stdioMCP struct {
	cs     *mcp.ClientSession
	stdout *syncbuf.Buffer // every byte the server wrote on stdout
	stderr io.Writer
	code   chan int
	stop   func() int
}

// readCloser reads r and closes c.
type readCloser struct {
	io.Reader
	io.Closer
}

// startStdio runs mcp with args on pipes, stderr to stderr, and connects the SDK client
// with mcp.IOTransport. The server stops (its stdin closed) when the test ends, or at stop.
func startStdio(t *testing.T, stderr io.Writer, args ...string) *stdioMCP {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m := &stdioMCP{stdout: &syncbuf.Buffer{}, stderr: stderr, code: make(chan int, 1)}
	go func() {
		code := run(append([]string{"mcp", "--now", mcpNow}, args...), streams{in: inR, out: outW, err: stderr})
		_ = outW.Close()
		m.code <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: readCloser{io.TeeReader(outR, m.stdout), outR}, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\nstderr:\n%v", err, stderr)
	}
	m.cs = cs
	var once sync.Once
	code := -1
	m.stop = func() int {
		once.Do(func() {
			_ = cs.Close()
			select {
			case code = <-m.code:
			case <-time.After(time.Minute):
				t.Error("mcp did not end within a minute of its stdin closing")
			}
		})
		return code
	}
	t.Cleanup(func() { m.stop() })
	return m
}

// onlyProtocol fails the test unless every line the server wrote on stdout is a JSON-RPC
// message: a progress line or a note there would break the client.
func onlyProtocol(t *testing.T, stdout string) {
	t.Helper()
	if stdout == "" {
		t.Fatal("nothing on stdout: the test saw no protocol")
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout holds a line that is not a JSON-RPC message: %q", sc.Text())
		}
	}
}

// call calls a tool over stdio and decodes its structured answer.
func (m *stdioMCP) call(t *testing.T, name string, args any, out any) {
	t.Helper()
	res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) answered an error: %s", name, args, toolText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func toolText(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// findingKeys pages list_findings of scan to its end and answers each finding as
// "target key".
func (m *stdioMCP) findingKeys(t *testing.T, scan string) []string {
	t.Helper()
	var keys []string
	args := map[string]any{"scan": scan}
	for {
		var page mcpserver.FindingsAnswer
		m.call(t, "list_findings", args, &page)
		if page.First != len(keys) || page.Next != "" && len(page.Findings) == 0 {
			t.Fatalf("page from %d with %d findings after %d: paging skipped, repeated or stalled", page.First, len(page.Findings), len(keys))
		}
		for _, f := range page.Findings {
			keys = append(keys, f.Target+" "+f.Key)
		}
		if page.Next == "" {
			return keys
		}
		args = map[string]any{"cursor": page.Next}
	}
}

// cliReport runs args (a scan with -o json) through run() and reads the JSON report.
func cliReport(t *testing.T, args ...string) report.Report {
	t.Helper()
	r := runCLI(t, append(args, "-o", "json", "--now", mcpNow)...)
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: exit %d, %v\n%s", args, r.code, err, r.stderr)
	}
	return rep
}

// reportKeys are a report's findings as "target key", in report order.
func reportKeys(rep report.Report) []string {
	var keys []string
	for _, tr := range rep.Targets {
		for _, f := range tr.Findings {
			keys = append(keys, tr.Target+" "+f.Key)
		}
	}
	return keys
}

// registeredTools are the tools an mcpserver registers, listed through an in-memory session.
func registeredTools(t *testing.T) []*mcp.Tool {
	t.Helper()
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Engine: eng, Root: t.TempDir(), MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func toolNames(tools []*mcp.Tool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// The "done when", over stdio as an assistant runs it: tools/list lists every tool
// the server registers, each with an input and an output schema and marked read-only; a
// scan of examples/manifests reaches the verdicts, scores and counts of upgradescope scan,
// and list_findings pages through exactly the CLI report's findings. Stdout carries nothing
// but the protocol and the process ends when its stdin closes.
func TestMCPOverStdioAnswersAsScanDoes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	m := startStdio(t, &stderr, "--root", root, "--no-cluster")

	listed, err := m.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, want := toolNames(listed.Tools), toolNames(registeredTools(t))
	if !slices.Equal(got, want) || !slices.Contains(got, "scan") || !slices.Contains(got, "list_findings") {
		t.Errorf("tools/list = %q, want the registered %q, scan and list_findings among them", got, want)
	}
	for _, tool := range listed.Tools {
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) || !strings.Contains(string(out), `"type":"object"`) {
			t.Errorf("%s: input schema %s, output schema %s: want both objects", tool.Name, in, out)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.Description == "" {
			t.Errorf("%s: annotations %+v, description %q: want read-only and described", tool.Name, tool.Annotations, tool.Description)
		}
	}

	targets := []string{"1.36", "1.37"}
	var a mcpserver.ScanAnswer
	m.call(t, "scan", map[string]any{"path": "examples/manifests", "targets": targets}, &a)
	rep := cliReport(t, "scan", "--files", filepath.Join(root, "examples", "manifests"), "--target", strings.Join(targets, ","))
	if len(a.Targets) != len(rep.Targets) {
		t.Fatalf("%d targets answered, the CLI's %d", len(a.Targets), len(rep.Targets))
	}
	for i, tr := range rep.Targets {
		ts := a.Targets[i]
		if ts.Target != tr.Target || ts.Verdict != tr.Verdict || ts.Score == nil || *ts.Score != tr.Score ||
			ts.Blockers != tr.Blockers || ts.Warnings != tr.Warnings || ts.Infos != tr.Infos {
			t.Errorf("answered %+v (score %v), the CLI's %s %s score %d, %d/%d/%d", ts, ts.Score, tr.Target, tr.Verdict, tr.Score, tr.Blockers, tr.Warnings, tr.Infos)
		}
	}
	if len(a.JudgedWith) != len(rep.Bundles) {
		t.Errorf("judged with %q, the CLI with %d bundles", a.JudgedWith, len(rep.Bundles))
	}
	keys, cliKeys := m.findingKeys(t, a.Scan), reportKeys(rep)
	if !slices.Equal(keys, cliKeys) || a.Findings != len(cliKeys) {
		t.Errorf("list_findings paged %d findings (scan counted %d):\n%q\nthe CLI's %d:\n%q", len(keys), a.Findings, keys, len(cliKeys), cliKeys)
	}
	if len(keys) <= 8 {
		t.Errorf("%d findings: one page holds them, the test proves no paging", len(keys))
	}

	if code := m.stop(); code != exitOK {
		t.Errorf("exit %d after stdin closed, want 0; stderr:\n%s", code, stderr.String())
	}
	onlyProtocol(t, m.stdout.String())
	for _, step := range []string{"loading policy bundles", "reading manifests", "evaluating"} {
		if strings.Contains(stderr.String(), step) {
			t.Errorf("stderr shows the progress step %q:\n%s", step, stderr.String())
		}
	}
}

// --max-concurrent 1 runs one tool call at a time: of two calls sent together, each running
// until the --policy-timeout stops its runaway pack, the second starts only after the first
// ends, so it ends at least a timeout later (the bound is a lower one: load can only widen
// it). Each answers a tool error naming the pack and the bound, and the server answers the
// next call.
func TestMCPMaxConcurrentRunsOneCallAtATime(t *testing.T) {
	dir := t.TempDir()
	// The pack spins at 1.36 only, so a scan at 1.37 afterwards is judged normally.
	writeRego(t, dir, "spin", `findings contains {"key": "x/y", "category": "x", "severity": "info", "target": t, "title": "t"} if {
	some t in input.targets
	t == "1.36"
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i == j + 1000000
}
`)
	const timeout = 2 * time.Second
	root, _ := filepath.Abs("../..")
	var stderr syncbuf.Buffer
	m := startStdio(t, &stderr, "--root", root, "--no-cluster", "--max-concurrent", "1",
		"--policy", filepath.Join(dir, "spin"), "--policy-timeout", timeout.String())

	ends := make([]time.Time, 2)
	msgs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scan",
				Arguments: map[string]any{"path": "examples/manifests", "targets": []string{"1.36"}}})
			ends[i] = time.Now()
			if err != nil {
				msgs[i] = err.Error()
				return
			}
			if !res.IsError {
				msgs[i] = "answered: " + toolText(res)
				return
			}
			msgs[i] = toolText(res)
		})
	}
	wg.Wait()
	for i, msg := range msgs {
		if !strings.Contains(msg, `policy pack "spin"`) || !strings.Contains(msg, "exceeded "+timeout.String()+" (--policy-timeout)") {
			t.Errorf("call %d: %q, want a tool error naming the pack and --policy-timeout", i, msg)
		}
	}
	first, second := ends[0], ends[1]
	if second.Before(first) {
		first, second = second, first
	}
	if gap := second.Sub(first); gap < timeout/2 {
		t.Errorf("the calls ended %s apart, want at least %s: the second ran beside the first", gap, timeout/2)
	}
	var a mcpserver.ScanAnswer
	m.call(t, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.37"}}, &a)
	if len(a.Targets) != 1 || a.Targets[0].Verdict != "blocked" {
		t.Errorf("the scan after: %+v", a.Targets)
	}
}

// --files-max-mib bounds what one scan reads: past it the verdict is unknown, never ready.
func TestMCPFilesMaxMiBBoundsAScan(t *testing.T) {
	root := t.TempDir()
	write(t, root, "manifests/a-api.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: web\n")
	write(t, root, "manifests/b-settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: web\ndata:\n  blob: "+strings.Repeat("x", 3<<19)+"\n")
	scan := map[string]any{"path": "manifests", "targets": []string{"1.37"}}
	for _, tt := range []struct {
		mib     string
		verdict string
	}{{"1", "unknown"}, {"2", "ready"}} {
		t.Run("--files-max-mib "+tt.mib, func(t *testing.T) {
			var stderr syncbuf.Buffer
			m := startStdio(t, &stderr, "--root", root, "--no-cluster", "--files-max-mib", tt.mib)
			var a mcpserver.ScanAnswer
			m.call(t, "scan", scan, &a)
			if ts := a.Targets[0]; ts.Verdict != tt.verdict {
				t.Errorf("verdict %s (not assessed %q), want %s", ts.Verdict, ts.NotAssessed, tt.verdict)
			}
		})
	}
}

// The cluster is the kubeconfig context current at start, and stays it: after the
// kubeconfig's current-context moves, a scan still reads the first context, names it, and
// reaches the verdict upgradescope scan reaches for that context.
func TestMCPScansTheContextFixedAtStart(t *testing.T) {
	shared := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cfg, err := clientcmd.LoadFromFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Contexts["admin"] == nil || cfg.Contexts["viewer"] == nil {
		t.Fatalf("%s has contexts %v, want admin and viewer", shared, cfg.Contexts)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg.CurrentContext = "admin"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	m := startStdio(t, &stderr, "--root", t.TempDir(), "--kubeconfig", kubeconfig)
	cfg.CurrentContext = "viewer" // a user's kubectl config use-context, after start
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cli := func(context string) string {
		rep := cliReport(t, "scan", "--kubeconfig", kubeconfig, "--context", context, "--target", "1.36")
		return rep.Targets[0].Verdict
	}
	if admin, viewer := cli("admin"), cli("viewer"); admin == viewer {
		t.Logf("admin and viewer both see %s: the verdict does not tell the contexts apart, the source does", admin)
	}
	// Other packages' tests change the shared server meanwhile: the answer is held to CLI
	// scans on either side of it that agree.
	for range 3 {
		before := cli("admin")
		var a mcpserver.ScanAnswer
		m.call(t, "scan", map[string]any{"cluster": true, "targets": []string{"1.36"}}, &a)
		after := cli("admin")
		if a.Source != "cluster admin" {
			t.Fatalf("source %q, want the context current at start", a.Source)
		}
		if before != after {
			continue
		}
		if a.Targets[0].Verdict != before {
			t.Errorf("verdict %s, upgradescope scan's %s", a.Targets[0].Verdict, before)
		}
		m.stop()
		onlyProtocol(t, m.stdout.String()) // the live collection's warnings go to stderr
		return
	}
	t.Skip("the shared server changed during every attempt")
}

// Suppressions are found as scan finds them, with --root in the working directory's place:
// the .upgradescope.yaml beside what a scan reads, else the one at --root, never one in the
// working directory (which may lie outside --root); --config replaces both. Each scan's
// answer names the file and counts what it suppressed, as scan with that file does.
func TestMCPFindsTheSuppressionsAsScanDoesWithinItsRoot(t *testing.T) {
	root := t.TempDir()
	app := filepath.Join(root, "app")
	if err := os.CopyFS(app, os.DirFS("../../examples/manifests")); err != nil {
		t.Fatal(err)
	}
	atRoot := write(t, root, ".upgradescope.yaml", "ignore:\n  - key: removed-api/extensions/v1beta1/Ingress\n    reason: retired in Q1\n")
	cwd := t.TempDir()
	write(t, cwd, ".upgradescope.yaml", "ignore:\n  - category: eol-addon\n    reason: not ours\n")
	t.Chdir(cwd)
	var stderr syncbuf.Buffer
	scanWith := func(t *testing.T, args ...string) mcpserver.ScanAnswer {
		m := startStdio(t, &stderr, append([]string{"--root", root, "--no-cluster"}, args...)...)
		var a mcpserver.ScanAnswer
		m.call(t, "scan", map[string]any{"path": "app", "targets": []string{"1.37"}}, &a)
		return a
	}
	same := func(t *testing.T, a mcpserver.ScanAnswer, shown, config string) {
		t.Helper()
		tr := cliReport(t, "scan", "--files", app, "--config", config, "--target", "1.37").Targets[0]
		if a.Suppressions != shown || a.Targets[0].Suppressed != tr.SuppressedCount || tr.SuppressedCount == 0 ||
			a.Targets[0].Blockers != tr.Blockers || a.Targets[0].Verdict != tr.Verdict {
			t.Errorf("answered suppressions %q, %+v; scan --config %s suppressed %d, %d blockers, %s",
				a.Suppressions, a.Targets[0], config, tr.SuppressedCount, tr.Blockers, tr.Verdict)
		}
	}

	t.Run("the root's, with none beside the manifests", func(t *testing.T) {
		same(t, scanWith(t), ".upgradescope.yaml", atRoot)
	})
	beside := write(t, app, ".upgradescope.yaml", "ignore:\n  - category: removed-api\n    reason: the app team converts them\n")
	t.Run("the one beside the manifests before the root's", func(t *testing.T) {
		same(t, scanWith(t), "app/.upgradescope.yaml", beside)
	})
	t.Run("--config's in place of both", func(t *testing.T) {
		same(t, scanWith(t, "--config", atRoot), atRoot, atRoot)
	})
	t.Run("none from the working directory", func(t *testing.T) {
		m := startStdio(t, &stderr, "--root", app, "--no-cluster")
		if err := os.Remove(beside); err != nil {
			t.Fatal(err)
		}
		var b mcpserver.ScanAnswer
		m.call(t, "scan", map[string]any{"path": ".", "targets": []string{"1.37"}}, &b)
		if b.Suppressions != "" || b.Targets[0].Suppressed != 0 {
			t.Errorf("with no suppression file under --root: suppressions %q, %d suppressed; want none", b.Suppressions, b.Targets[0].Suppressed)
		}
	})
}
