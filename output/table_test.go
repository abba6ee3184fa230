package output_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

func TestTableMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatTable, output.Options{})
}

func TestAPlanTableListsEachFindingOnceAtTheHopThatAddsIt(t *testing.T) {
	got := rendered(t, output.FormatTable, judged(t, "plan-hops"), output.Options{})
	matchesGolden(t, "plan-hops.table", got)
	for _, key := range []string{"ADDS", "HOP 1.30 -> 1.31", "HOP 1.34 -> 1.35"} {
		if !bytes.Contains(got, []byte(key)) {
			t.Errorf("plan table lacks %q", key)
		}
	}
	if bytes.Contains(got, []byte("\nTARGET ")) {
		t.Error("plan table repeats every target in full")
	}
}

func TestTableIsPlainTextWithLinesThatFitATerminal(t *testing.T) {
	for _, scenario := range append(goldenScenarios, "addon-containerd-on-nodes", "plan-hops") {
		got := rendered(t, output.FormatTable, judged(t, scenario), output.Options{})
		if bytes.Contains(got, []byte("\x1b[")) {
			t.Errorf("%s: table output contains ANSI escapes", scenario)
		}
		for _, line := range strings.Split(string(got), "\n") {
			// A line may only run past 100 columns on a title, a citation or one long word.
			if len(line) > 100 && strings.HasPrefix(line, "      ") && !strings.HasPrefix(line, "      see: ") &&
				strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("%s: %d-column line: %s", scenario, len(line), line)
			}
		}
	}
}

func TestTableCountsReadAsEnglish(t *testing.T) {
	got := string(rendered(t, output.FormatTable, judged(t, "suppressions"), output.Options{}))
	if !strings.Contains(got, "(2 blockers, 0 warnings, 0 info, 1 suppressed)") {
		t.Errorf("target line does not use plurals:\n%s", got)
	}
	if !strings.Contains(got, "1 object suppressed") {
		t.Errorf("suppressed object count is not singular:\n%s", got)
	}
}

func TestTheBundlesLineNamesSourceAndSignature(t *testing.T) {
	r := judged(t, "suppressions")
	r.Bundles = []report.BundleInfo{
		{Name: "rules", Revision: "1", Source: "embedded"},
		{Name: "kb", Revision: "2", Source: "https://b.example/kb.tar.gz", Signature: report.SignatureVerified},
		{Name: "acme", Revision: "3", Source: "acme.tar.gz", Signature: report.SignatureNotChecked},
		{Name: "team", Revision: "4", Source: "./team"},
	}
	got := string(rendered(t, output.FormatTable, r, output.Options{}))
	want := "Bundles:  rules 1 (embedded), kb 2 (https://b.example/kb.tar.gz, signature verified), " +
		"acme 3 (acme.tar.gz, signature not checked), team 4 (./team)\n"
	if !strings.Contains(got, want) {
		t.Errorf("bundles line:\n%s\nwant %q", got, want)
	}
}

func TestControlCharactersFromManifestsAreShownEscaped(t *testing.T) {
	r := judged(t, "suppressions")
	f := &r.Targets[0].Findings[0]
	f.Objects[0].Name = "shop\x1b[2J\x1b]0;pwned\x07"
	f.Objects[0].Namespace = "web\r\nVERDICT READY"
	f.Title = "title\u009b31m"
	got := string(rendered(t, output.FormatTable, r, output.Options{}))
	for _, raw := range []string{"\x1b", "\x07", "\r", "\u009b"} {
		if strings.Contains(got, raw) {
			t.Errorf("table holds the raw control character %q", raw)
		}
	}
	for _, shown := range []string{`shop\x1b[2J\x1b]0;pwned\x07`, `web\x0d\x0aVERDICT READY`, `title\u009b31m`} {
		if !strings.Contains(got, shown) {
			t.Errorf("table lacks the escaped form %s:\n%s", shown, got)
		}
	}
	if strings.Contains(got, "\nVERDICT READY") {
		t.Error("a name's line break started a line of its own")
	}
}
