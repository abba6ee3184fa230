package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// Issue 30, item 9: a single builtin call passed the 128 MiB heap guard, which only cancels
// between expressions: replace(s, "", s) with 30,000 characters built 900 MB. Every builtin
// whose one call can build far more than its operands is sized before it runs and refused past
// an eighth of --policy-memory, naming the pack, the line and the builtin, under scan, eval
// and policy test alike.
func TestHostileBuiltinCallsAreRefusedBeforeTheyBuild(t *testing.T) {
	const s30k = `s := concat("", ["a" | some _ in numbers.range(1, 30000)])` + "\n"
	pack := func(setup, expr string, cmd ...string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			writeRego(t, dir, "big", setup+
				"\nfindings contains {\"key\": \"big/x\", \"category\": \"big\", \"severity\": \"info\", \"target\": t, \"title\": \"t\"} if {\n"+
				"\tsome t in input.targets\n\t"+expr+"\n}\n")
			return append(cmd, "--policy", "big")
		}
	}
	scan := func(setup, expr string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			write(t, dir, "m/a.yaml", removedIngress)
			return pack(setup, expr, "scan", "--files", "m", "--target", "1.37")(t, dir)
		}
	}
	inv, _ := filepath.Abs("../../testdata/clean-is-ready/inventory.json")
	refused := func(builtin string) []string {
		return []string{`policy pack "big" (big/p.rego:`, builtin + " would build more than 16 MiB in one call (--policy-memory)"}
	}
	noReport := []string{"upgradescope report"}
	var doubling strings.Builder
	doubling.WriteString("c0 := \"aaaaaaaaaaaaaaaa\"\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&doubling, "c%d := concat(\"\", [c%d, c%d])\n", i, i-1, i-1)
	}
	var shared strings.Builder
	shared.WriteString("a0 := \"xxxxxxxx\"\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&shared, "a%d := [x | some x in [a%d, a%d]]\n", i, i-1, i-1)
	}
	runHostile(t, []hostile{
		{
			name: "replace with an empty pattern and a 30,000-character string, under scan",
			args: scan(s30k, `count(replace(s, "", s)) > 0`),
			code: 1, want: refused("replace"), absent: noReport,
		},
		{
			name: "strings.replace_n replacing each character by the string, under scan",
			args: scan(s30k, `count(strings.replace_n({"a": s}, s)) > 0`),
			code: 1, want: refused("strings.replace_n"), absent: noReport,
		},
		{
			name: "regex.replace of the empty match by the string, under eval",
			args: pack(s30k, `count(regex.replace(s, "", s)) > 0`, "eval", "--inventory", inv, "--target", "1.37"),
			code: 1, want: refused("regex.replace"), absent: noReport,
		},
		{
			name: "regex.replace expanding each match a thousand times, under scan",
			args: scan(s30k, `count(regex.replace(s, "a", concat("", ["$0" | some _ in numbers.range(1, 1000)]))) > 0`),
			code: 1, want: refused("regex.replace"), absent: noReport,
		},
		{
			name: "concat doubling a string thirty rules deep, under scan",
			args: scan(doubling.String(), `count(c30) > 0`),
			code: 1, want: refused("concat"), absent: noReport,
		},
		{
			name: "concat with the string between 3,000 copies of it, under scan",
			args: scan(s30k, `count(concat(s, [s | some _ in numbers.range(1, 3000)])) > 0`),
			code: 1, want: refused("concat"), absent: noReport,
		},
		{
			name: "sprintf writing its one argument 3,000 times, under scan",
			args: scan(s30k, `count(sprintf(concat("", ["%[1]s" | some _ in numbers.range(1, 3000)]), [s])) > 0`),
			code: 1, want: refused("sprintf"), absent: noReport,
		},
		{
			name: "json.marshal of a value that holds another 2^40 times in 40 rules, under scan",
			args: scan(shared.String(), `count(json.marshal(a40)) > 0`),
			code: 1, want: refused("json.marshal"), absent: noReport,
		},
		{
			name: "a pack's test calling replace with an empty pattern stops policy test, naming the test",
			args: func(t *testing.T, dir string) []string {
				writeRego(t, dir, "rep", s30k+"\ntest_rep if count(replace(s, \"\", s)) > 0\n")
				return []string{"policy", "test", "rep"}
			},
			code: 1, want: []string{"policy test stopped: data.upgradescope.custom.rep.test_rep: replace would build more than 16 MiB in one call (--policy-memory)"},
		},
		{
			name: "a pack's test calling strings.replace_n stops policy test, naming the test",
			args: func(t *testing.T, dir string) []string {
				writeRego(t, dir, "rep", s30k+"\ntest_rep if count(strings.replace_n({\"a\": s}, s)) > 0\n")
				return []string{"policy", "test", "rep", "--policy-memory", "64"}
			},
			code: 1, want: []string{"data.upgradescope.custom.rep.test_rep: strings.replace_n would build more than 8 MiB in one call (--policy-memory)"},
		},
		{
			name: "strings.render_template is refused when the pack loads",
			args: scan("", `strings.render_template("{{range .a}}{{range $.a}}{{end}}{{end}}", {"a": numbers.range(1, 100000)}) != ""`),
			code: 1, want: []string{"big/p.rego:", "strings.render_template"}, absent: noReport,
		},
	})
}

// The fleet server evaluates with the same bounded builtins: a pack given with --bundle whose
// rule calls replace(s, "", s) on a pushed or gated inventory fails that evaluation, naming
// the pack and the builtin, and the server stays well below 256 MiB.
func TestHostileBuiltinCallUnderServeIsRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "big/.manifest", `{"revision": "1", "roots": ["upgradescope/custom/big"]}`)
	// Only a real inventory trips it: the probe of an empty one at start passes.
	write(t, dir, "big/upgradescope/custom/big/p.rego", `package upgradescope.custom.big

s := concat("", ["a" | some _ in numbers.range(1, 30000)])

findings contains {"key": "big/x", "category": "big", "severity": "info", "target": t, "title": "t"} if {
	some t in input.targets
	count(input.inventory.apiUsage) > 0
	count(replace(s, "", s)) > 0
}
`)
	write(t, dir, "m/a.yaml", removedIngress)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--read-token-file", writeSecret(t, dir, "read", gateReadToken),
		"--bundle", filepath.Join(dir, "big"))
	g := runBuilt(t, "gate", "--server", p.url, "--read-token", gateReadToken, "--files", filepath.Join(dir, "m"), "--target", "1.37")
	if g.code != 1 || !strings.Contains(g.stderr, `policy pack "big"`) || !strings.Contains(g.stderr, "replace would build more than 16 MiB in one call") {
		t.Errorf("gate exit %d, want 1 naming the pack and replace:\n%s", g.code, g.stderr)
	}
	if peak := vmHWM(t, p.cmd.Process.Pid); peak > maxHostileRSS {
		t.Errorf("serve's peak RSS %d MiB, want under %d MiB", peak>>20, maxHostileRSS>>20)
	}
}

// Issue 30, item 13: an 889 KB suppression file (within its 1 MiB bound) or a 15 MB inventory
// (within its 16 MiB) ended in "built-in rules: evaluation exceeded 5s". The rules that were
// quadratic in them are linear now; what still takes long names the input that is large and
// where it came from, with the flag to raise.
func TestHostileLargeInputsAreJudgedOrBlamedForTheirSize(t *testing.T) {
	runHostile(t, []hostile{
		{
			name: "an 889 KB suppression file of key rules over 2,200 objects is judged",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "m/.upgradescope.yaml", suppressionFile(func(i int) string {
					return fmt.Sprintf("  - key: removed-api/x%d\n    namespace: \"ns-%d-*\"\n    reason: tracked in TICKET-%d\n", i, i, i)
				}))
				write(t, dir, "m/many.yaml", manyRemovedObjects(2000, 200))
				return []string{"scan", "--files", "m", "--target", "1.37"}
			},
			code: 2, want: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress"},
		},
		{
			name: "an 889 KB suppression file of category rules with globs is judged or blamed, never the rules",
			args: func(t *testing.T, dir string) []string {
				write(t, dir, "m/.upgradescope.yaml", suppressionFile(func(i int) string {
					return fmt.Sprintf("  - category: removed-api\n    namespace: \"ns-%d-*\"\n    name: \"app-%d*\"\n    reason: the migration window %d\n", i, i, i)
				}))
				write(t, dir, "m/many.yaml", manyRemovedObjects(2000, 200))
				return []string{"scan", "--files", "m", "--target", "1.37", "--policy-timeout", "1s"}
			},
			code: 1, want: []string{"built-in rules: evaluation exceeded 1s over 7,897 ignore rules (ignore rules from m/.upgradescope.yaml) (--policy-timeout)"},
		},
		{
			name: "a 15 MB inventory of 10,000 node groups of long names is judged with eval",
			args: inventoryOf(func(d *inventory.Document) {
				for i := range 10_000 {
					d.Nodes = append(d.Nodes, inventory.NodeGroup{KubeletVersion: "v1.36.0", ContainerRuntime: "cri-o://1.33.2", Count: 1,
						Names: []string{fmt.Sprintf("node-%05d-%s", i, strings.Repeat("x", 1400))}})
				}
			}),
			code: 2, want: []string{"Container runtime cri-o: no lifecycle data", "and 9980 more"},
		},
		{
			name: "a 14 MB inventory of 10,000 versions of an add-on image is judged with eval",
			args: inventoryOf(func(d *inventory.Document) { d.WorkloadImages = istioVersions(10_000, 1400) }, "--policy-timeout", "60s"),
			code: 2, want: []string{"VERDICT BLOCKED", "Istio 1.21.0, 1.21.1", "and 9980 more"},
		},
		{
			name: "an inventory that takes longer than --policy-timeout names its size and its file",
			args: inventoryOf(func(d *inventory.Document) { d.WorkloadImages = istioVersions(10_000, 10) }, "--policy-timeout", "100ms"),
			code: 1, want: []string{"built-in rules: evaluation exceeded 100ms over 10,000 image versions (inventory inventory.json, ", " MB) (--policy-timeout)"},
		},
	})
}

// suppressionFile is an ignore list of rules from rule(i), just under 889 KB.
func suppressionFile(rule func(i int) string) string {
	var b strings.Builder
	b.WriteString("ignore:\n")
	for i := 0; b.Len() < 889_000; i++ {
		b.WriteString(rule(i))
	}
	return b.String()
}

// manyRemovedObjects is ingresses objects and psps PodSecurityPolicies, one namespace each.
func manyRemovedObjects(ingresses, psps int) string {
	var b strings.Builder
	for i := range ingresses {
		fmt.Fprintf(&b, "---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: app-%d\n  namespace: ns-%d\n", i, i)
	}
	for i := range psps {
		fmt.Fprintf(&b, "---\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: psp-%d\n", i)
	}
	return b.String()
}

// inventoryOf writes a live cluster's inventory, filled by with, and evals it.
func inventoryOf(with func(*inventory.Document), extra ...string) func(*testing.T, string) []string {
	return func(t *testing.T, dir string) []string {
		d := &inventory.Document{
			SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster, ClusterID: "c", ServerVersion: "v1.36.0",
			CollectedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Capabilities: map[string]inventory.Capability{},
			APIUsage: []inventory.APIUsage{},
		}
		for _, c := range []string{"api-usage", "versions", "addons", "helm", "images", "crds", "nodes"} {
			d.Capabilities[c] = inventory.Capability{Available: true}
		}
		with(d)
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, "inventory.json", string(data))
		return append([]string{"eval", "--inventory", "inventory.json", "--target", "1.37"}, extra...)
	}
}

// istioVersions are n patch versions of Istio 1.21, which does not support Kubernetes 1.37,
// each in a namespace of a name of pad characters more.
func istioVersions(n, pad int) []inventory.WorkloadImage {
	versions := make([]inventory.ImageVersion, n)
	for i := range versions {
		versions[i] = inventory.ImageVersion{Tag: fmt.Sprintf("1.21.%d", i), Namespaces: []string{fmt.Sprintf("ns-%05d-%s", i, strings.Repeat("n", pad))}}
	}
	return []inventory.WorkloadImage{{Repository: "docker.io/istio/pilot", Versions: versions}}
}
