package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/mcp.md's example answers with what the tools answer")

// example is one example in docs/mcp.md: a marker naming the call, then its answer.
//
//	<!-- answer: scan {"path": "examples/manifests", "targets": ["1.37"]} -->
//	```json
//	{ … }
//	```
var example = regexp.MustCompile("(?m)^<!-- answer: ([a-z_]+) (\\{.*\\}) -->\n```json\n((?s:.*?))\n```$")

// docsFleet is the fleet the examples read: one cluster blocked, one ready, one unknown.
var docsFleet = map[string]string{"prod-eu-1": "teams", "prod-us-1": "clean-is-ready", "staging-1": "missing-capability-is-unknown"}

// docs/mcp.md's example answers are what the tools answer, call for call, in order, over
// examples/manifests and a fleet of three, at the pinned clock: an example a change made
// stale fails here (go test ./mcpserver -run TestTheDocsExampleAnswers -update rewrites
// them, to be read before committing). Every tool the server lists has an example.
func TestTheDocsExampleAnswersAreWhatTheToolsAnswer(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "mcp.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "examples", "manifests"), os.DirFS(filepath.Join(repoRoot(t), "examples", "manifests"))); err != nil {
		t.Fatal(err)
	}
	f := startFleetOf(t, docsFleet)
	writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	cs := connect(t, f.mcpServer(t, root, fleetReadToken), pipes)

	documented := map[string]bool{}
	var failed bool
	out := example.ReplaceAllFunc(doc, func(m []byte) []byte {
		sub := example.FindSubmatch(m)
		name, args, want := string(sub[1]), sub[2], string(sub[3])
		documented[name] = true
		got := answerOf(t, cs, name, args)
		if got != want && !*updateDocs {
			failed = true
			t.Errorf("docs/mcp.md: the example of %s %s is stale; the tool answers:\n%s", name, args, got)
		}
		return []byte("<!-- answer: " + name + " " + string(args) + " -->\n```json\n" + got + "\n```")
	})
	if len(documented) == 0 {
		t.Fatal("docs/mcp.md holds no example answer")
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if !documented[tool.Name] {
			t.Errorf("docs/mcp.md has no example answer of %s", tool.Name)
		}
	}
	if *updateDocs && !bytes.Equal(out, doc) && !failed {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// answerOf is a tool's structured answer as docs/mcp.md shows it: indented JSON.
func answerOf(t *testing.T, cs *mcp.ClientSession, name string, args []byte) string {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		t.Fatalf("docs/mcp.md: the arguments of %s: %v", name, err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: in})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("docs/mcp.md: %s %s answers an error: %s", name, args, text(res))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res.StructuredContent); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// The client snippets in docs/mcp.md are JSON a client can read.
func TestTheDocsClientSnippetsAreValidJSON(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllSubmatch(doc, -1)
	snippets := 0
	for _, b := range blocks {
		var v any
		if err := json.Unmarshal(b[1], &v); err != nil {
			t.Errorf("docs/mcp.md: a json block does not parse: %v\n%s", err, b[1])
		}
		if bytes.Contains(b[1], []byte(`"command": "upgradescope"`)) {
			snippets++
		}
	}
	if snippets < 2 {
		t.Errorf("docs/mcp.md has %d client snippets starting upgradescope, want the mcpServers and VS Code ones", snippets)
	}
}
