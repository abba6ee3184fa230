package mcpserver_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// now pins every test's evaluation clock, so answers compare with a CLI run at --now.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// repoRoot is the repository, where examples/manifests lives.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

var (
	builtinOnce sync.Once
	builtin     *engine.Engine
	builtinErr  error
)

// builtinEngine is one engine with the built-in bundles, shared: compiling them takes seconds.
// Its evaluations may take two minutes, not the default five seconds: the tests here hold
// answers' sizes and contents, and planning four hops of the worst shapes (2,580 Helm
// releases) takes 7–9 s on this 2-core machine, a speed docs/performance.md tracks.
func builtinEngine(t testing.TB) *engine.Engine {
	t.Helper()
	builtinOnce.Do(func() {
		builtin, builtinErr = engine.New(context.Background(), engine.WithLimits(engine.Limits{Timeout: 2 * time.Minute}))
	})
	if builtinErr != nil {
		t.Fatal(builtinErr)
	}
	return builtin
}

// newServer is a server over root with the built-in engine, the pinned clock and two
// slots; edit adjusts the config first.
func newServer(t testing.TB, root string, edit ...func(*mcpserver.Config)) *mcpserver.Server {
	t.Helper()
	cfg := mcpserver.Config{Engine: builtinEngine(t), Root: root, MaxConcurrent: 2, Now: func() time.Time { return now }, Version: "test",
		Files: mcpserver.FilesBudget{TeamLabel: "team", Timeout: time.Minute}}
	for _, e := range edit {
		e(&cfg)
	}
	s, err := mcpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// transport names how a test reaches the server: both are tested for every tool.
type transport string

const (
	pipes    transport = "in-process pipes"
	loopback transport = "loopback HTTP"
)

var transports = []transport{pipes, loopback}

// connect opens an SDK client session to s over tr; it closes with the test.
func connect(t testing.TB, s *mcpserver.Server, tr transport) *mcp.ClientSession {
	t.Helper()
	if tr == loopback {
		return connectHTTP(t, serveHTTP(t, s, mcpserver.HTTPOptions{}))
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectHTTP opens an SDK client session, a session of its own, to the server serveHTTP
// serves at base; it closes with the test.
func connectHTTP(t testing.TB, base string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + mcpserver.Path, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// serveHTTP serves s's HTTP handler on a loopback listener and returns its base URL.
func serveHTTP(t testing.TB, s *mcpserver.Server, o mcpserver.HTTPOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler(o), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// call calls a tool and decodes its structured answer into Out, failing the test on a tool
// error or an answer past MaxAnswer. It returns the answer's size in bytes as sent.
func call[Out any](t testing.TB, cs *mcp.ClientSession, name string, args any) (Out, int) {
	t.Helper()
	var out Out
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) answered an error: %s", name, args, text(res))
	}
	if len(raw) > mcpserver.MaxAnswer {
		t.Errorf("%s(%v): answer of %d bytes, past %d", name, args, len(raw), mcpserver.MaxAnswer)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured answer %s: %v", name, b, err)
	}
	return out, len(raw)
}

// callError calls a tool that must refuse, and returns the error text the assistant reads.
func callError(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("%s(%v) answered, want a refusal: %s", name, args, text(res))
	}
	return text(res)
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
