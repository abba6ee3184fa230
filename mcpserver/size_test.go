package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/report"
)

// A worstShape is an input users really have, at its worst for the size of an answer: the
// most objects, the most findings, the longest strings a rule or an inventory can carry.
type worstShape struct {
	name string
	// prepare writes the input under root and returns scan's source and any change to the
	// server's config (a custom pack's engine, say).
	prepare func(t *testing.T, root string) (source map[string]any, edit func(*mcpserver.Config))
	targets []string
	// want is the report the scan must page through, judged without the server.
	want func(t *testing.T, root string, eng *engine.Engine, targets []string) *report.Report
	// check asserts what the shape is about on the report the pages added up to.
	check func(t *testing.T, scan mcpserver.ScanAnswer, lines []mcpserver.FindingLine)
	// fleet pushes the shape's inventory to a fleet the server reads (worstFleet).
	fleet bool
}

// scannedShape is a worst shape after scan answered: what a tool's first question is made
// of.
type scannedShape struct {
	source  map[string]any // scan's source: path or inventory
	targets []string
	scan    mcpserver.ScanAnswer
	lines   []mcpserver.FindingLine // every finding, as list_findings paged them
	// fleet says the server reads a fleet holding the shape's inventory as worstFleet
	// pushed it, and a signed candidate bundle is under the root.
	fleet bool
}

// mostObjects is the finding with the most objects, the worst for a tool that lists them;
// its key as the line shows it, cut short or not (the custom pack's 400-byte keys), is what
// explain_finding is asked about.
func (w scannedShape) mostObjects() mcpserver.FindingLine {
	return slices.MaxFunc(w.lines, func(a, b mcpserver.FindingLine) int { return a.Objects - b.Objects })
}

// firstQuestions is, for every tool tools/list names, its first question at a worst shape
// that has been scanned; nil args mean the tool has nothing to answer about that shape.
// TestEveryToolsFirstAnswerFitsAtTheWorstShapes fails for a tool with no row: add one with
// the tool, asking what makes its answer largest (the finding with the most objects for
// explain_finding, the highest target for plan_upgrade; a fleet tool needs the shape pushed
// to a fleet server in its config edit).
var firstQuestions = map[string]func(w scannedShape) map[string]any{
	"scan":           nil, // asked first, with the shape's own source
	"list_findings":  func(w scannedShape) map[string]any { return map[string]any{"scan": w.scan.Scan} },
	"fleet_summary":  ifFleet(map[string]any{}),
	"fleet_findings": ifFleet(map[string]any{}),
	"dry_run_bundle": ifFleet(map[string]any{"bundle": worstCandidate}),
	"explain_finding": func(w scannedShape) map[string]any {
		f := w.mostObjects()
		return map[string]any{"scan": w.scan.Scan, "target": f.Target, "key": f.Key}
	},
	"plan_upgrade": func(w scannedShape) map[string]any {
		args := map[string]any{"target": w.targets[len(w.targets)-1]}
		if _, files := w.source["path"]; files {
			args["from"] = "1.33" // manifests name no version: the longest plan the corpora's targets allow
		}
		for k, v := range w.source {
			args[k] = v
		}
		return args
	},
	"registry_lookup": func(scannedShape) map[string]any { return map[string]any{"query": "v1beta1"} }, // a version: the most APIs
}

// ifFleet asks args of a shape held in a fleet, nothing of the others.
func ifFleet(args map[string]any) func(scannedShape) map[string]any {
	return func(w scannedShape) map[string]any {
		if !w.fleet {
			return nil
		}
		return args
	}
}

// worstShapes are the inputs of the size bound (issue 35): the two manifest corpora of make
// bench (100k objects there, 5,000 in make test), a neglected cluster with over 500 findings
// at one target, the same read by an identity refused every read (four targets, each saying
// why it could not be assessed), and the hostile ones: a custom pack's 10 KB titles and
// 1,000 objects a finding, and an inventory whose namespaces and teams are as long as its
// schema allows.
var worstShapes = []worstShape{
	corpusShape(corpus.Classic),
	corpusShape(corpus.ManyImages),
	{
		name:    "a neglected cluster with over 500 findings at one target",
		prepare: inventoryShape(neglectedCluster),
		targets: []string{"1.36", "1.37"},
		want:    judgedInventory,
		fleet:   true,
		check: func(t *testing.T, scan mcpserver.ScanAnswer, lines []mcpserver.FindingLine) {
			for _, ts := range scan.Targets {
				if n := ts.Blockers + ts.Warnings + ts.Infos; ts.Target == "1.37" && n < 500 {
					t.Errorf("1.37: %d findings, want the 500 the shape is about", n)
				}
			}
		},
	},
	{
		name:    "the neglected cluster read by an identity refused every read, at four targets",
		prepare: inventoryShape(refusedCluster),
		targets: []string{"1.36", "1.37", "1.38", "1.39"},
		want:    judgedInventory,
		check: func(t *testing.T, scan mcpserver.ScanAnswer, _ []mcpserver.FindingLine) {
			for _, ts := range scan.Targets {
				if len(ts.NotAssessed) == 0 {
					t.Errorf("%s: nothing not assessed, want the refused reads named", ts.Target)
				}
			}
		},
	},
	{
		name:    "a custom pack whose findings have 10 KB titles and 1,000 objects each",
		prepare: hostilePackShape,
		targets: []string{"1.37"},
		want:    judgedFiles("manifests"),
		check: func(t *testing.T, _ mcpserver.ScanAnswer, lines []mcpserver.FindingLine) {
			n := 0
			for _, l := range lines {
				if !strings.HasPrefix(l.Key, "hostile/") {
					continue
				}
				n++
				if !clipped(l.Title) || len(l.Title) > 512 {
					t.Errorf("%s: title of %d bytes ending %q: want it cut and marked …", l.Key, len(l.Title), l.Title[max(len(l.Title)-8, 0):])
				}
				if l.Objects != hostileObjects {
					t.Errorf("%s: %d objects, want the %d the pack named: the count is not cut", l.Key, l.Objects, hostileObjects)
				}
			}
			if n != hostileFindings {
				t.Errorf("%d of the pack's findings paged, want %d", n, hostileFindings)
			}
		},
	},
	{
		name:    "an inventory whose namespaces and teams are 4,096 characters long",
		prepare: inventoryShape(longNamesCluster),
		targets: []string{"1.36", "1.37"},
		want:    judgedInventory,
		fleet:   true,
		check: func(t *testing.T, _ mcpserver.ScanAnswer, lines []mcpserver.FindingLine) {
			for _, l := range lines {
				for _, team := range l.Teams {
					if !strings.HasPrefix(team, "+") && (!clipped(team) || len(team) > 128) {
						t.Errorf("%s: a team of %d bytes shown, want it cut and marked …", l.Key, len(team))
					}
				}
			}
		},
	},
}

func TestEveryToolsFirstAnswerFitsAtTheWorstShapes(t *testing.T) {
	for _, sh := range worstShapes {
		t.Run(sh.name, func(t *testing.T) {
			root := t.TempDir()
			source, edit := sh.prepare(t, root)
			var held func(*mcpserver.Config)
			if sh.fleet {
				held = worstFleet(t, root)
			}
			var eng *engine.Engine
			s := newServer(t, root, func(c *mcpserver.Config) {
				for _, e := range []func(*mcpserver.Config){edit, held} {
					if e != nil {
						e(c)
					}
				}
				eng = c.Engine
			})
			cs, wire := connectWire(t, s)
			args := map[string]any{"targets": sh.targets}
			for k, v := range source {
				args[k] = v
			}
			start := time.Now()
			scan := callWire[mcpserver.ScanAnswer](t, cs, wire, "scan", args)
			t.Logf("scan: %d bytes, %d findings (%s)", wire.last(), scan.Findings, time.Since(start).Round(time.Millisecond))

			lines := readEveryPage(t, cs, wire, scan)
			sameFindings(t, lines, sh.want(t, root, eng, sh.targets))
			if sh.check != nil {
				sh.check(t, scan, lines)
			}
			w := scannedShape{source: source, targets: sh.targets, scan: scan, lines: lines, fleet: sh.fleet}
			for _, name := range listedTools(t, cs) {
				ask, ok := firstQuestions[name]
				if !ok {
					t.Errorf("tool %s has no row in firstQuestions: add its first question at the worst shapes", name)
					continue
				}
				if ask == nil {
					continue
				}
				if a := ask(w); a != nil {
					start := time.Now()
					callWire[map[string]any](t, cs, wire, name, a)
					t.Logf("%s %.100v: %d bytes (%s)", name, a, wire.last(), time.Since(start).Round(time.Millisecond))
				}
			}
		})
	}
}

// readEveryPage follows list_findings from the first page through every next, and returns
// the findings in the order paged. Each page is within MaxAnswer (call checks), starts where
// the one before it ended, and the last one names no next.
func readEveryPage(t *testing.T, cs *mcp.ClientSession, wire *wireSizes, scan mcpserver.ScanAnswer) []mcpserver.FindingLine {
	t.Helper()
	var lines []mcpserver.FindingLine
	args := map[string]any{"scan": scan.Scan}
	pages, largest := 0, 0
	defer func() { t.Logf("list_findings: %d pages, the largest %d bytes", pages, largest) }()
	for {
		if pages > scan.Findings {
			t.Fatalf("%d pages for %d findings: next never ends", pages, scan.Findings)
		}
		page := callWire[mcpserver.FindingsAnswer](t, cs, wire, "list_findings", args)
		pages, largest = pages+1, max(largest, wire.last())
		if page.Total != scan.Findings || page.First != len(lines) {
			t.Fatalf("page %d: from %d of %d, want from %d of %d (the scan's findings, no gap or overlap)",
				pages, page.First, page.Total, len(lines), scan.Findings)
		}
		if len(page.JudgedWith) == 0 {
			t.Errorf("page %d names no bundle revision", pages)
		}
		lines = append(lines, page.Findings...)
		if page.Next == "" {
			break
		}
		if len(page.Findings) == 0 {
			t.Fatalf("page %d: empty, with a next", pages)
		}
		args = map[string]any{"cursor": page.Next}
	}
	if len(lines) != scan.Findings {
		t.Errorf("pages hold %d findings, the scan %d", len(lines), scan.Findings)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if clipped(l.Key) {
			continue // two keys cut to one prefix look alike; sameFindings holds them to the report
		}
		if id := l.Target + " " + l.Key; seen[id] {
			t.Errorf("%s paged twice", id)
		} else {
			seen[id] = true
		}
	}
	return lines
}

// sameFindings holds the pages to the report judged without the server: the same findings,
// in the report's order, a key cut short only where it is marked so.
func sameFindings(t *testing.T, lines []mcpserver.FindingLine, want *report.Report) {
	t.Helper()
	var all []report.Finding
	for _, tr := range want.Targets {
		all = append(all, tr.Findings...)
	}
	if len(lines) != len(all) {
		t.Errorf("pages hold %d findings, the report %d", len(lines), len(all))
	}
	for i := range min(len(lines), len(all)) {
		l, f := lines[i], all[i]
		if l.Target != f.Target || !(l.Key == f.Key || clipped(l.Key) && strings.HasPrefix(f.Key, strings.TrimSuffix(l.Key, "…"))) {
			t.Fatalf("finding %d paged as %s %s, the report's is %s %s", i, l.Target, l.Key, f.Target, f.Key)
		}
	}
}

// clipped reports whether an answer cut s short, as it marks it.
func clipped(s string) bool { return strings.HasSuffix(s, "…") }

// wireSizes is a client transport that keeps the size of the last result read off it as
// the server wrote it: what reaches an assistant's context, the SDK's own additions
// (_meta, resultType) included.
type wireSizes struct {
	mcp.Transport
	mu   sync.Mutex
	size int
}

func (w *wireSizes) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	return &wireConn{Connection: c, w: w}, err
}

func (w *wireSizes) last() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

type wireConn struct {
	mcp.Connection
	w *wireSizes
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.w.mu.Lock()
		c.w.size = len(r.Result)
		c.w.mu.Unlock()
	}
	return m, err
}

// connectWire opens an SDK client session to s over in-process pipes, measuring each result
// on the wire.
func connectWire(t *testing.T, s *mcpserver.Server) (*mcp.ClientSession, *wireSizes) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	w := &wireSizes{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, w
}

// callWire is call, with the result also held to MaxAnswer as the server wrote it.
func callWire[Out any](t *testing.T, cs *mcp.ClientSession, w *wireSizes, name string, args any) Out {
	t.Helper()
	out, _ := call[Out](t, cs, name, args)
	if n := w.last(); n > mcpserver.MaxAnswer {
		t.Errorf("%s(%v): %d bytes on the wire, past %d", name, args, n, mcpserver.MaxAnswer)
	}
	return out
}

// listedTools are the tools tools/list names.
func listedTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// corpusShape is make bench's corpus of shape, judged at four targets: the most findings a
// files scan of it can have, each naming the most objects.
func corpusShape(shape corpus.Shape) worstShape {
	return worstShape{
		name: fmt.Sprintf("the %s corpus", shape.Name),
		prepare: func(t *testing.T, root string) (map[string]any, func(*mcpserver.Config)) {
			n := corpusObjects(t)
			if err := corpus.Write(filepath.Join(root, "corpus"), n, shape); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d objects", n)
			return map[string]any{"path": "corpus"}, nil
		},
		targets: []string{"1.34", "1.35", "1.36", "1.37"},
		want:    judgedFiles("corpus"),
	}
}

// corpusObjectsEnv sets the size of the manifest corpora; make bench sets it to 100000,
// the bound. Both corpora at 100k take 37 s on two shared cores (generated, scanned,
// judged again, and asked every tool's question: explain_finding plans fix over the whole
// corpus, plan_upgrade scans it again), so make test scans 5,000 objects (3.6 s): the same
// shapes and the same findings (32 and 36 at four targets from 2,000 objects to 100,000:
// the corpora hold the same judged APIs and add-ons at every size, with more objects each),
// answers a few bytes shorter (the counts of objects have fewer digits).
const corpusObjectsEnv = "UPGRADESCOPE_MCP_CORPUS_OBJECTS"

func corpusObjects(t testing.TB) int {
	n := 5_000
	if v := os.Getenv(corpusObjectsEnv); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a number of objects", corpusObjectsEnv, v)
		}
	}
	return n
}

// inventoryShape writes the inventory doc makes as cluster.json under the root.
func inventoryShape(doc func(t testing.TB) []byte) func(*testing.T, string) (map[string]any, func(*mcpserver.Config)) {
	return func(t *testing.T, root string) (map[string]any, func(*mcpserver.Config)) {
		if err := os.WriteFile(filepath.Join(root, "cluster.json"), doc(t), 0o600); err != nil {
			t.Fatal(err)
		}
		return map[string]any{"inventory": "cluster.json"}, nil
	}
}

// worstCandidate is the signed candidate bundle worstFleet writes under the root.
const worstCandidate = "candidate.tar.gz"

// worstFleet starts a fleet server as startFleet does, holding the shape's cluster.json
// pushed as four clusters with the longest names a fleet shows whole (63 characters), so
// every finding names more clusters than a line lists; it writes a candidate bundle signed
// for it under root, and answers the config edit that reads the fleet with the read token.
func worstFleet(t *testing.T, root string) func(*mcpserver.Config) {
	t.Helper()
	f := serveFleet(t, now)
	doc, err := inventory.ReadFile(filepath.Join(root, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		f.push(t, fmt.Sprintf("eu-west-1-payments-settlement-production-blue-green-cluster-%03d", i), doc)
	}
	writeCandidate(t, root, worstCandidate, f.privateKey)
	fc, err := client.New(f.url, client.WithToken(fleetReadToken))
	if err != nil {
		t.Fatal(err)
	}
	return func(c *mcpserver.Config) { c.Fleet = fc }
}

// judgedInventory is cluster.json judged by the server's engine, as scan judges it.
func judgedInventory(t *testing.T, root string, eng *engine.Engine, targets []string) *report.Report {
	t.Helper()
	doc, err := inventory.ReadFile(filepath.Join(root, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.Evaluate(context.Background(), doc, targets, now)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// neglectedCluster is hack/corpus.Cluster(500, 1), the fleet bench's large cluster, left
// behind: a sixth of its 2,580 Helm releases pin a chart whose kubeVersion stops below 1.35,
// one in twenty keeps a removed API in its stored manifest, teams run end-of-life lines of
// Fluent Bit, Gatekeeper, Istio and Karpenter beside the current ones, and namespaces and
// teams have the long names of a large organisation (63 characters, the most a label
// allows). Judged at 1.37 it has 717 findings: 509 releases whose chart excludes it, 172
// removed APIs, 25 end-of-life add-ons.
func neglectedCluster(t testing.TB) []byte {
	t.Helper()
	doc := corpus.Cluster(500, 1)
	for i := range doc.HelmReleases {
		r := &doc.HelmReleases[i]
		switch {
		case i%6 == 0:
			r.KubeVersion = ">=1.24.0-0 <1.35.0-0"
		case i%20 == 1:
			r.ManifestAPIs = append(r.ManifestAPIs, inventory.APIUsage{Group: "policy", Version: "v1beta1",
				Kind: "PodDisruptionBudget", Count: 1, Namespaces: map[string]int{r.Namespace: 1}})
		}
	}
	for i, img := range endOfLifeAddons {
		repo, tag, _ := inventory.SplitImage(img)
		doc.WorkloadImages = append(doc.WorkloadImages, inventory.WorkloadImage{Repository: repo, Versions: []inventory.ImageVersion{
			{Tag: tag, Namespaces: []string{doc.Namespaces[(i*37)%len(doc.Namespaces)].Name}},
		}})
	}
	slices.SortFunc(doc.WorkloadImages, func(a, b inventory.WorkloadImage) int { return strings.Compare(a.Repository, b.Repository) })
	return renamed(t, doc, func(name string) string {
		return name + "-eu-west-1-shared-platform-services-blue-green-0000000000"
	}, func(team string) string {
		return team + "-payments-settlement-and-reconciliation-engineering-emea"
	}, 63)
}

// refusedCluster is the neglected cluster collected by an identity every read was refused
// to, each capability giving the reason the cluster collector writes for a 403.
func refusedCluster(t testing.TB) []byte {
	t.Helper()
	var doc inventory.Document
	if err := json.Unmarshal(neglectedCluster(t), &doc); err != nil {
		t.Fatal(err)
	}
	for name := range doc.Capabilities {
		doc.Capabilities[name] = inventory.Capability{Reason: fmt.Sprintf(`list %s: forbidden: %s is forbidden: `+
			`User "system:serviceaccount:platform-upgrade-readiness:upgradescope-agent" cannot list resource "%s" `+
			`in API group "" at the cluster scope`, name, name, name)}
	}
	b, err := json.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// endOfLifeAddons are release lines whose end of life the knowledge base knows, as teams
// that installed their own copy years ago still run them.
var endOfLifeAddons = []string{
	"docker.io/fluent/fluent-bit:1.8.15", "docker.io/fluent/fluent-bit:1.9.10", "docker.io/fluent/fluent-bit:2.0.14",
	"docker.io/fluent/fluent-bit:2.1.10", "docker.io/fluent/fluent-bit:2.2.3", "docker.io/fluent/fluent-bit:3.0.7",
	"docker.io/openpolicyagent/gatekeeper:v3.10.0", "docker.io/openpolicyagent/gatekeeper:v3.12.0",
	"docker.io/openpolicyagent/gatekeeper:v3.14.2", "docker.io/openpolicyagent/gatekeeper:v3.15.1",
	"docker.io/istio/pilot:1.18.7", "docker.io/istio/pilot:1.19.10", "docker.io/istio/pilot:1.20.8",
	"public.ecr.aws/karpenter/controller:0.33.5", "public.ecr.aws/karpenter/controller:0.36.2",
	"public.ecr.aws/karpenter/controller:0.37.5",
}

// longNamesCluster is a small cluster whose namespace names and team labels are 4,096
// characters, the most the inventory schema takes: what a hostile or broken collector can
// hand scan.
func longNamesCluster(t testing.TB) []byte {
	t.Helper()
	doc := corpus.Cluster(24, 1)
	for i := range doc.HelmReleases {
		if i%2 == 0 {
			doc.HelmReleases[i].KubeVersion = "<1.35.0-0"
		}
	}
	pad := func(s string) string { return s + "-" + strings.Repeat("x", inventory.MaxStringLength) }
	return renamed(t, doc, pad, pad, inventory.MaxStringLength)
}

// renamed is doc's JSON with every namespace name and team label renamed and cut to limit.
// The JSON is rewritten rather than the document, since names recur in a dozen places
// (releases, images, API usage, probes); each is a whole JSON string, so a quoted
// replacement changes exactly those.
func renamed(t testing.TB, doc *inventory.Document, ns, team func(string) string, limit int) []byte {
	t.Helper()
	var pairs []string
	teams := map[string]bool{}
	for _, n := range doc.Namespaces {
		pairs = append(pairs, fmt.Sprintf("%q", n.Name), fmt.Sprintf("%q", cut(ns(n.Name), limit)))
		if n.Team != "" && !teams[n.Team] {
			teams[n.Team] = true
			pairs = append(pairs, fmt.Sprintf("%q", n.Team), fmt.Sprintf("%q", cut(team(n.Team), limit)))
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(b)))
}

func cut(s string, n int) string { return s[:min(len(s), n)] }

// hostileFindings and hostileObjects are what hostilePack's rule makes at each target:
// findings with 10 KB titles, 1,000 objects each.
const (
	hostileFindings = 40
	hostileObjects  = 1000
)

// hostilePack is a custom pack at its worst for an answer's size: every finding's title is
// 10 KB and it names 1,000 objects; half the titles are markup, whose every character JSON
// escapes (< as \u003c in the answer, \\u003c in the text beside it), so a string cut to a
// number of bytes would take several times that; half the keys hold 400 bytes of the title.
// The rule is what a user's --policy may hold.
var hostilePack = fmt.Sprintf(`package upgradescope.custom.hostile

findings contains f if {
	some t in input.targets
	some i in numbers.range(1, %d)
	unit := ["0123456789", "<\"&>\\<\"&>\\", "<\"&>\\<\"&>\\", "0123456789"][i %% 4]
	title := concat("", [sprintf("%%d ", [i]), concat("", [s | some _ in numbers.range(1, 1024); s := unit])])
	f := {
		"key": [sprintf("hostile/finding-%%03d", [i]), sprintf("hostile/finding-%%03d %%s", [i, substring(title, 0, 400)])][i %% 2],
		"category": "hostile",
		"severity": "blocker",
		"target": t,
		"title": title,
		"objects": [o | some j in numbers.range(1, %d); o := {"kind": "ConfigMap", "namespace": "hostile", "name": sprintf("object-%%04d", [j])}],
		"namespaces": ["hostile"],
		"citations": [],
	}
}
`, hostileFindings, hostileObjects)

// hostilePackShape scans examples/manifests with hostilePack beside the built-in bundles.
func hostilePackShape(t *testing.T, root string) (map[string]any, func(*mcpserver.Config)) {
	t.Helper()
	pack := filepath.Join(t.TempDir(), "upgradescope", "custom", "hostile")
	if err := os.MkdirAll(pack, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pack, "hostile.rego"), []byte(hostilePack), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background(), engine.WithPolicy(filepath.Dir(filepath.Dir(filepath.Dir(pack)))))
	if err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(repoRoot(t), "examples", "manifests"), filepath.Join(root, "manifests"))
	return map[string]any{"path": "manifests"}, func(c *mcpserver.Config) { c.Engine = eng }
}

// judgedFiles is the manifests under root/dir judged by the server's engine, as scan
// judges them.
func judgedFiles(dir string) func(*testing.T, string, *engine.Engine, []string) *report.Report {
	return func(t *testing.T, root string, eng *engine.Engine, targets []string) *report.Report {
		t.Helper()
		res, err := files.Collect(filepath.Join(root, dir), files.Options{Observe: eng.Observe(), TeamLabel: "team"})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := eng.Evaluate(context.Background(), files.Inventory(res, now), targets, now)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
