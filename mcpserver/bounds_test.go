package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// An inventory file past inventory.MaxDocumentBytes is refused unread, naming the file and
// the bound, as eval refuses it.
func TestAnOversizedInventoryIsRefusedNamingTheFile(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "huge.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is what is refused, and the test writes no 16 MiB.
	if err := f.Truncate(inventory.MaxDocumentBytes + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	cs := connect(t, newServer(t, root), pipes)
	msg := callError(t, cs, "scan", map[string]any{"inventory": "huge.json", "targets": []string{"1.37"}})
	if !strings.Contains(msg, "huge.json") || !strings.Contains(msg, "larger than 16 MiB") {
		t.Errorf("refusal %q, want it to name huge.json and the 16 MiB bound", msg)
	}
}

// A walk past the files budget reads what fits and says the rest was not read: the verdict
// is unknown, never ready, and names what was not assessed.
func TestTheFilesBudgetBoundsAScan(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "manifests", "a-api.yaml"), deployment)
	writeFile(t, filepath.Join(root, "manifests", "b-settings.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: web\ndata:\n  blob: "+strings.Repeat("x", 4096)+"\n")
	scan := map[string]any{"path": "manifests", "targets": []string{"1.37"}}
	budget := func(c *mcpserver.Config) { c.Files.MaxBytes = 2048 }
	a, _ := call[mcpserver.ScanAnswer](t, connect(t, newServer(t, root, budget), pipes), "scan", scan)
	ts := a.Targets[0]
	if ts.Verdict != "unknown" || ts.Score != nil || !strings.Contains(strings.Join(ts.NotAssessed, "; "), "api-usage: 1 path(s) not read") {
		t.Errorf("target %+v: want unknown, no score, api-usage naming the file not read", ts)
	}
	// The same scan within the default budget is ready: the bound made the difference.
	b, _ := call[mcpserver.ScanAnswer](t, connect(t, newServer(t, root), pipes), "scan", scan)
	if b.Targets[0].Verdict != "ready" {
		t.Errorf("unbounded target %+v, want ready: the test proves nothing", b.Targets[0])
	}
	// A budget that leaves nothing read says why nothing was found.
	none := func(c *mcpserver.Config) { c.Files.MaxBytes = 16 }
	if msg := callError(t, connect(t, newServer(t, root, none), pipes), "scan", scan); !strings.Contains(msg, "no Kubernetes objects found") ||
		!strings.Contains(msg, "a-api.yaml") {
		t.Errorf("a scan that read nothing: %q, want it to name the file the budget left unread", msg)
	}
}

// A cursor this server did not give is a tool error the assistant can read and act on,
// not a protocol failure and not a page of something else.
func TestACursorThatIsNotOursIsAReadableToolError(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.37"}})
	encode := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	tests := []struct{ name, cursor, want string }{
		{"not base64", "not a cursor!", `cursor "not a cursor!": not one this server gave; pass the "next" of an answer unchanged`},
		{"base64 of no JSON", encode("hello"), "not one this server gave"},
		{"a negative position", encode(`{"q":{},"at":-1}`), "not one this server gave"},
		{"a query of the wrong shape", encode(`{"q":[1,2],"at":1}`), "not one this server gave"},
		{"a long one, clipped in the answer", strings.Repeat("x", 5000), "not one this server gave"},
		{"a scan not kept", encode(`{"q":{"scan":"scan-999"},"at":0}`), `scan "scan-999" is not kept`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_findings", Arguments: map[string]any{"cursor": tt.cursor}})
			if err != nil {
				t.Fatalf("a protocol error %v, want a tool error", err)
			}
			if msg := text(res); !res.IsError || !strings.Contains(msg, tt.want) || len(msg) > 200 {
				t.Errorf("answer (error %v) %q, want a short tool error saying %q", res.IsError, msg, tt.want)
			}
		})
	}
}

// targets takes 1 to 4 minors, and the input schema says so: a client sees the bound in
// tools/list, and the SDK refuses 0 or 5 before the tool runs.
func TestTargetsOutsideOneToFourAreRefusedByTheSchema(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var targets struct {
		Properties struct {
			Targets struct {
				MinItems *int `json:"minItems"`
				MaxItems *int `json:"maxItems"`
			} `json:"targets"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	for _, tool := range tools.Tools {
		if tool.Name == "scan" {
			b, _ := json.Marshal(tool.InputSchema)
			if err := json.Unmarshal(b, &targets); err != nil {
				t.Fatal(err)
			}
		}
	}
	tt := targets.Properties.Targets
	if tt.MinItems == nil || *tt.MinItems != 1 || tt.MaxItems == nil || *tt.MaxItems != 4 {
		t.Errorf("scan's targets schema: minItems %v maxItems %v, want 1 and 4", tt.MinItems, tt.MaxItems)
	}
	for name, in := range map[string][]string{"no target": {}, "five targets": {"1.33", "1.34", "1.35", "1.36", "1.37"}} {
		t.Run(name, func(t *testing.T) {
			msg := callError(t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": in})
			// The tool's own check says "give 1 to 4 minors"; the schema's names the field.
			if !strings.Contains(msg, "validating") || !strings.Contains(msg, "targets") || strings.Contains(msg, "give 1 to") {
				t.Errorf("refusal %q, want the input schema's, naming targets", msg)
			}
		})
	}
}

// Every page stays within MaxAnswer as the client receives it, the SDK's envelope (the
// server's name and version in _meta) included, with the longest version a server carries.
func TestEveryPageFitsWithTheLongestVersion(t *testing.T) {
	long := func(c *mcpserver.Config) { c.Version = strings.Repeat("v1.2.3-rc.4+", 20) }
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, repoRoot(t), long), tr)
			call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.33", "1.34", "1.36", "1.37"}})
			if keys := allKeys(t, cs, ""); len(keys) < 20 {
				t.Errorf("%d findings: too few to fill a page, the test proves nothing", len(keys))
			}
		})
	}
}

// A refusal is bounded like an answer, whoever refuses: the SDK's schema check quotes the
// input it refuses, and a 200 KB argument must not come back as a 200 KB answer.
func TestARefusalOfAHugeInputStaysWithinTheBound(t *testing.T) {
	huge := strings.Repeat("x", 200<<10)
	for _, tr := range transports {
		cs := connect(t, newServer(t, t.TempDir()), tr)
		for _, tc := range []struct {
			name string
			tool string
			args map[string]any
		}{
			{"an unknown argument named by 200 KB", "scan", map[string]any{"path": "m", "targets": []string{"1.37"}, huge: 1}},
			{"a target list that is a 200 KB string", "scan", map[string]any{"path": "m", "targets": huge}},
			{"a path that is 200 KB", "scan", map[string]any{"path": huge, "targets": []string{"1.37"}}},
			{"a severity that is 200 KB", "list_findings", map[string]any{"severity": huge}},
			{"a query that is an object", "registry_lookup", map[string]any{"query": map[string]any{huge: huge}}},
		} {
			t.Run(string(tr)+": "+tc.name, func(t *testing.T) {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					if len(err.Error()) > mcpserver.MaxAnswer {
						t.Errorf("a protocol error of %d bytes", len(err.Error()))
					}
					return
				}
				raw, _ := json.Marshal(res)
				if !res.IsError || len(raw) > mcpserver.MaxAnswer {
					t.Errorf("answer of %d bytes (error %v), want a refusal within %d", len(raw), res.IsError, mcpserver.MaxAnswer)
				}
			})
		}
	}
}

// A clipped refusal keeps its end, where the schema says why: a 1 MB query is refused
// naming the bound it broke.
func TestAClippedRefusalStillSaysWhy(t *testing.T) {
	cs := connect(t, newServer(t, t.TempDir()), pipes)
	msg := callError(t, cs, "registry_lookup", map[string]any{"query": strings.Repeat("q", 1<<20)})
	if len(msg) > mcpserver.MaxAnswer/2+8 || !strings.Contains(msg, "200") {
		t.Errorf("refusal of %d bytes: %q…%q, want it within 2 KB and naming the 200-byte bound", len(msg), msg[:min(len(msg), 120)], msg[max(0, len(msg)-160):])
	}
}
