package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/report"
)

// A fleet finding's title must not carry one cluster's count beside the fleet's total
// (issue 34 review, 5). The rules put their counts of objects, nodes and pods in
// parentheses; fleetTitle removes exactly those. The titles the rules' own tests spell and
// every title in the repository's JSON goldens are the corpus: after fleetTitle none keeps a
// parenthesised count of any unit, and nothing else of a title changes.
func TestFleetTitlesLeaveNoRulesCount(t *testing.T) {
	anyCount := regexp.MustCompile(`\(\d+ [a-z]+(\(s\))?\)`)
	titles := ruleTitles(t)
	if len(titles) < 100 {
		t.Fatalf("read %d titles from the rules' tests and the goldens; want the corpus (over 100)", len(titles))
	}
	stripped := 0
	for _, title := range titles {
		got := fleetTitle(title)
		if m := anyCount.FindString(got); m != "" {
			t.Errorf("fleetTitle(%q) = %q keeps the count %s: teach titleCount its unit", title, got, m)
		}
		if got != title {
			stripped++
			if removed := len(title) - len(got); !anyCount.MatchString(title) || removed > len(" (999999 manifests)") {
				t.Errorf("fleetTitle(%q) = %q removes more than a count", title, got)
			}
		}
	}
	if stripped == 0 {
		t.Error("no title of the corpus had a count removed")
	}
}

func TestFleetTitleRemovesTheRulesCountsOnly(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"batch/v1beta1 CronJob removed in 1.25 (1 object)", "batch/v1beta1 CronJob removed in 1.25"},
		{"StorageClasses name the in-tree AWS EBS provisioner: removed in 1.27, the minor after 1.26 (121 objects)",
			"StorageClasses name the in-tree AWS EBS provisioner: removed in 1.27, the minor after 1.26"},
		{"Nodes run Docker Engine through the dockershim: removed in 1.24 (130 nodes)", "Nodes run Docker Engine through the dockershim: removed in 1.24"},
		{"Pods no controller owns (1 pod): kubectl drain refuses them without --force, which deletes them for good",
			"Pods no controller owns: kubectl drain refuses them without --force, which deletes them for good"},
		{"Pods with emptyDir volumes (2 manifests): kubectl drain refuses them", "Pods with emptyDir volumes: kubectl drain refuses them"},
		// Not counts: a version in parentheses, names, a count the rule words in its sentence.
		{"1 kubelet(s) are more than 3 minors behind the control plane (1.32) already", "1 kubelet(s) are more than 3 minors behind the control plane (1.32) already"},
		{"PodDisruptionBudget shop/web allows no disruption: 1 of its 3 pods is not healthy (pods web-1, web-2)",
			"PodDisruptionBudget shop/web allows no disruption: 1 of its 3 pods is not healthy (pods web-1, web-2)"},
		{"(1 object)", "(1 object)"},
	} {
		if got := fleetTitle(tc.title); got != tc.want {
			t.Errorf("fleetTitle(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}

// ruleTitles are the titles the rules' Rego tests expect and those in JSON files of the
// repository (goldens, examples), each once.
func ruleTitles(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	regoTitle := regexp.MustCompile(`title == ("(?:[^"\\]|\\.)*")`)
	jsonTitle := regexp.MustCompile(`"title": ?("(?:[^"\\]|\\.)*")`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(path, "_test.rego"):
			re = regoTitle
		case strings.HasSuffix(path, ".json") && strings.Contains(path, "testdata"):
			re = jsonTitle
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if s, err := strconv.Unquote(m[1]); err == nil {
				seen[s] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	return out
}

func TestOwnerListsAreSortedWithNoTeamLast(t *testing.T) {
	got := ownerOrder([]string{"search", report.Unattributed, "data", "search"})
	if strings.Join(got, ",") != "data,search,"+report.Unattributed {
		t.Errorf("ownerOrder = %v, want data, search, then no team", got)
	}
}

func TestAnUnknownVerdictsCauseNamesItsFirstRequiredGroupOfGaps(t *testing.T) {
	probes := func(n int) []report.Gap {
		var out []report.Gap
		for i := range n {
			out = append(out, report.Gap{Capability: "probes/kb/p" + strconv.Itoa(i), Required: true, Reason: "not collected: the agent predates it"})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		gaps []report.Gap
		want string
	}{
		{"sixty probes of one bundle are one cause", probes(60), "60 probes of kb"},
		{"one capability", []report.Gap{{Capability: "nodes", Required: true, Reason: "forbidden"}}, "nodes"},
		{"optional gaps are no cause", []report.Gap{{Capability: "metrics", Reason: "absent"}}, ""},
		{"other causes are counted", append(probes(2), report.Gap{Capability: "nodes", Required: true, Reason: "forbidden"},
			report.Gap{Capability: "helm", Required: true, Reason: "forbidden"}), "2 probes of kb and 2 more causes"},
		{"none", nil, ""},
	} {
		if got := gapCause(tc.gaps); got != tc.want {
			t.Errorf("%s: gapCause = %q, want %q", tc.name, got, tc.want)
		}
	}
}
