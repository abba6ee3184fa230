package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// BenchmarkMCPScanAnswer is a scan tool call through the SDK's in-memory transport, as an
// assistant makes it: the 100k-object classic corpus of make bench walked, judged at four
// targets and answered; the neglected cluster's inventory (717 findings at 1.37) read and
// judged at two; and, to show what the server adds, the same inventory read and judged
// without it. The numbers and the machine are in docs/performance.md.
func BenchmarkMCPScanAnswer(b *testing.B) {
	b.Run("classic-100000", func(b *testing.B) {
		root := b.TempDir()
		if err := corpus.Write(filepath.Join(root, "corpus"), 100_000, corpus.Classic); err != nil {
			b.Fatal(err)
		}
		benchCall(b, root, "scan", map[string]any{"path": "corpus", "targets": []string{"1.34", "1.35", "1.36", "1.37"}})
	})
	b.Run("neglected-cluster", func(b *testing.B) {
		benchCall(b, neglectedRoot(b), "scan", map[string]any{"inventory": "cluster.json", "targets": []string{"1.36", "1.37"}})
	})
	b.Run("neglected-cluster-without-mcp", func(b *testing.B) {
		path := filepath.Join(neglectedRoot(b), "cluster.json")
		eng := builtinEngine(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			doc, err := inventory.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := eng.Evaluate(ctx, doc, []string{"1.36", "1.37"}, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMCPListFindingsPage is list_findings' first page of the neglected cluster's
// report (1,432 findings over two targets) through the in-memory transport: every finding
// made a line, then fit marshalling pages of 1, 2, 4, … lines and halving back to the most
// that fit.
func BenchmarkMCPListFindingsPage(b *testing.B) {
	cs := connect(b, newServer(b, neglectedRoot(b)), pipes)
	scan, _ := call[mcpserver.ScanAnswer](b, cs, "scan", map[string]any{"inventory": "cluster.json", "targets": []string{"1.36", "1.37"}})
	benchSession(b, cs, "list_findings", map[string]any{"scan": scan.Scan})
}

// neglectedRoot is a root holding the neglected cluster as cluster.json.
func neglectedRoot(b *testing.B) string {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cluster.json"), neglectedCluster(b), 0o600); err != nil {
		b.Fatal(err)
	}
	return root
}

func benchCall(b *testing.B, root, tool string, args map[string]any) {
	benchSession(b, connect(b, newServer(b, root), pipes), tool, args)
}

func benchSession(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			b.Fatalf("%s: %s", tool, text(res))
		}
	}
}
