package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/cover"
)

const examplePack = "../../examples/policies"

// The example pack's three tests, as OPA names them.
var exampleTests = []string{
	"data.upgradescope.custom.acme_test.test_deprecated_api_in_prod_is_a_warning: PASS",
	"data.upgradescope.custom.acme_test.test_deprecated_api_outside_prod_is_fine: PASS",
	"data.upgradescope.custom.acme_test.test_not_yet_deprecated_is_fine: PASS",
}

// halfCoveredPack writes a pack with two rules, a test of the first that passes and, with
// failing, one that fails.
func halfCoveredPack(t *testing.T, failing bool) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "upgradescope/custom/x/x.rego", "package upgradescope.custom.x\n\n"+
		"findings contains \"a\" if input.a\n\nfindings contains \"b\" if input.b\n")
	test := "package upgradescope.custom.x_test\n\nimport data.upgradescope.custom.x\n\n" +
		"test_a if x.findings == {\"a\"} with input as {\"a\": true}\n"
	if failing {
		test += "\ntest_wrong if {\n\tprint(\"findings were\", x.findings)\n\tx.findings == {\"b\"} with input as {\"a\": true}\n}\n"
	}
	write(t, dir, "upgradescope/custom/x/x_test.rego", test)
	return dir
}

func TestPolicyTestVerbosePrintsEveryTestAndTheTraceOfAFailure(t *testing.T) {
	quiet := runCLI(t, "policy", "test", examplePack)
	loud := runCLI(t, "policy", "test", "-v", examplePack)
	if quiet.code != 0 || loud.code != 0 {
		t.Fatalf("exit %d and %d (%s%s), want 0", quiet.code, loud.code, quiet.stderr, loud.stderr)
	}
	for _, name := range exampleTests {
		if strings.Contains(quiet.stdout, name) {
			t.Errorf("without -v the passing test %q is printed:\n%s", name, quiet.stdout)
		}
		if !strings.Contains(loud.stdout, name) {
			t.Errorf("-v does not print %q:\n%s", name, loud.stdout)
		}
	}
	// A failing test's notes and failures: the expression that failed, with its line.
	r := runCLI(t, "policy", "test", "--verbose", halfCoveredPack(t, true))
	if r.code != 2 || !strings.Contains(r.stdout, "x_test.rego:9       | | Fail data.upgradescope.custom.x.findings = {\"b\"}") {
		t.Errorf("exit %d, stdout:\n%s\nwant 2 and the failed expression traced", r.code, r.stdout)
	}
}

func TestPolicyTestRunsOnlyTheTestsNamedByRun(t *testing.T) {
	tests := []struct {
		name, run string
		code      int
		stdout    []string
		stderr    string
	}{
		{name: "a name picks one test", run: "outside_prod", stdout: []string{"PASS: 1/1"}},
		{name: "a pattern picks several", run: "_is_fine$", stdout: []string{"PASS: 2/2"}},
		{name: "the full name is matched", run: `^data\.upgradescope\.custom\.acme_test\.test_not_yet`, stdout: []string{"PASS: 1/1"}},
		{name: "a pattern matching nothing is an error", run: "no_such_test", code: 1, stderr: `matches --run "no_such_test"`},
		{name: "a pattern that does not compile is an error naming it", run: "(", code: 1, stderr: `--run "(": error parsing regexp`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "policy", "test", "--run", tt.run, examplePack)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout %q lacks %q", r.stdout, want)
				}
			}
		})
	}
}

func TestPolicyTestCoverageReportsTheModulesUnderThePathsNamed(t *testing.T) {
	r := runCLI(t, "policy", "test", "--coverage", examplePack)
	var rep cover.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
		t.Fatalf("exit %d, %v; stdout %q stderr %q", r.code, err, r.stdout, r.stderr)
	}
	var files []string
	for f := range rep.Files {
		files = append(files, f)
	}
	slices.Sort(files)
	want := []string{
		examplePack + "/upgradescope/custom/acme/limits/limits.rego", examplePack + "/upgradescope/custom/acme/limits/limits_test.rego",
		examplePack + "/upgradescope/custom/acme/prod.rego", examplePack + "/upgradescope/custom/acme/prod_test.rego",
	}
	if !slices.Equal(files, want) || rep.Coverage != 100 || rep.CoveredLines == 0 {
		t.Errorf("files %v, coverage %v over %d lines; want %v fully covered (the built-in library left out)", files, rep.Coverage, rep.CoveredLines, want)
	}

	half := halfCoveredPack(t, false)
	r = runCLI(t, "policy", "test", "-c", half)
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Coverage <= 0 || rep.Coverage >= 100 || rep.NotCoveredLines == 0 {
		t.Errorf("exit %d, %v, coverage %v with %d lines not covered; want the untested rule counted", r.code, err, rep.Coverage, rep.NotCoveredLines)
	}
}

func TestPolicyTestCoverageFailsLikeOPATest(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "below the threshold exits 2", args: []string{"--coverage", "--threshold", "90"}, code: 2, stderr: "Code coverage threshold not met: got 66.67 instead of 90.00"},
		{name: "a threshold alone asks for coverage", args: []string{"--threshold", "60"}, stdout: `"coverage": 66.66`},
		{name: "a threshold past 100 is refused", args: []string{"--threshold", "101"}, code: 1, stderr: "--threshold 101"},
	}
	half := halfCoveredPack(t, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append(append([]string{"policy", "test"}, tt.args...), half)...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
	// A failing test prints the failure, not a report.
	r := runCLI(t, "policy", "test", "--coverage", halfCoveredPack(t, true))
	if r.code != 2 || !strings.Contains(r.stdout, "test_wrong: FAIL") || strings.Contains(r.stdout, `"coverage"`) {
		t.Errorf("exit %d, stdout %q; want 2 and the failure without a report", r.code, r.stdout)
	}
}

// The built-in tests run beside a custom pack that fires on nearly every input: a test that
// let custom findings into what it asserts would fail here (issue 11).
func TestPolicyTestOfACustomPackWithTheBuiltinBundlesPasses(t *testing.T) {
	r := runCLI(t, "policy", "test", "../../testdata/policies/team-label", "../../policies/rules", "../../policies/kb")
	if r.code != 0 || strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "PASS: ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// A pack's tests are as hermetic as its rules: policy test refuses the builtins scan and eval
// refuse, with the builtin's name and the test's file and line.
func TestPolicyTestRefusesNetworkClockAndRandomBuiltins(t *testing.T) {
	for _, call := range []string{
		`http.send({"method": "get", "url": "http://127.0.0.1:1"})`,
		`net.lookup_ip_addr("example.com")`,
		`time.now_ns() > 0`,
		`rand.intn("x", 10) >= 0`,
	} {
		name := strings.SplitN(call, "(", 2)[0]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "upgradescope/custom/x/x.rego", "package upgradescope.custom.x\n\nfindings := set()\n")
			write(t, dir, "upgradescope/custom/x/x_test.rego", "package upgradescope.custom.x_test\n\n"+
				"test_reaches_out if {\n\t"+call+"\n}\n")
			r := runCLI(t, "policy", "test", dir)
			if r.code != 1 || !strings.Contains(r.stderr, "x_test.rego:4") || !strings.Contains(r.stderr, name) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 naming %s at x_test.rego:4", r.code, r.stdout, r.stderr, name)
			}
		})
	}
}

// docs/custom-rules.md tells users which stock opa to install: the version this binary
// embeds, so the two agree on the language and builtins.
func TestCustomRulesDocPinsTheEmbeddedOPAVersion(t *testing.T) {
	doc, err := os.ReadFile("../../docs/custom-rules.md")
	if err != nil {
		t.Fatal(err)
	}
	v := moduleVersion("github.com/open-policy-agent/opa")
	if !strings.HasPrefix(v, "v1.") {
		t.Fatalf("embedded OPA version %q, want v1.x", v)
	}
	for _, want := range []string{"go install github.com/open-policy-agent/opa@" + v, "/releases/tag/" + v} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/custom-rules.md lacks %q (the OPA module this binary embeds is %s)", want, v)
		}
	}
}

// The walk-through of docs/custom-rules.md: a pack's probe is observed only when the pack is
// loaded while collecting, and judging an inventory collected without it names the gap.
func TestACustomPackProbeFiresThroughEvalAndItsAbsenceIsAGap(t *testing.T) {
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.json"), filepath.Join(dir, "without.json")
	for path, args := range map[string][]string{
		with:    {"inventory", "--files", examples + "/prod-shop.yaml", "--policy", examplePack, "-q"},
		without: {"inventory", "--files", examples + "/prod-shop.yaml", "-q"},
	} {
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		write(t, dir, filepath.Base(path), r.stdout)
	}
	r := runCLI(t, "eval", "--inventory", with, "--target", "1.37", "--policy", examplePack)
	for _, want := range []string{"VERDICT READY", "[acme-limits] 1 production Deployment(s) run containers without resource limits",
		"prod-shop/cart spec.template.spec.containers[1]", "Deployment prod-shop/cart (prod-shop.yaml:10)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("eval of an inventory collected with the pack: stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "eval", "--inventory", without, "--target", "1.37", "--policy", examplePack)
	for _, want := range []string{"VERDICT UNKNOWN", "probes/custom/acme/deployment-without-limits  required  not collected"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("eval of an inventory collected without the pack: stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "acme-limits") {
		t.Errorf("a finding was judged on a probe nobody observed:\n%s", r.stdout)
	}
}
