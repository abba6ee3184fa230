package files

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestAnExclusionPatternMatchesAsGitignoreDoes(t *testing.T) {
	for _, tc := range []struct {
		name, glob, path string
		dir, want        bool
	}{
		{"a base name matches at the root", "ratings_data.json", "ratings_data.json", false, true},
		{"a base name matches at any depth", "ratings_data.json", "samples/bookinfo/src/ratings_data.json", false, true},
		{"a star stays within its segment of a base name", "*.json", "a/b/c.json", false, true},
		{"a double star leading matches any depth", "**/ratings_data.json", "samples/x/ratings_data.json", false, true},
		{"a double star leading matches no directory at all", "**/ratings_data.json", "ratings_data.json", false, true},
		{"a pattern with a slash is anchored at the root", "samples/x.json", "other/samples/x.json", false, false},
		{"an anchored pattern matches from the root", "samples/*.json", "samples/x.json", false, true},
		{"an anchored star does not cross a slash", "samples/*.json", "samples/deep/x.json", false, false},
		{"a double star in the middle crosses directories", "samples/**/x.json", "samples/a/b/x.json", false, true},
		{"a double star in the middle matches none", "samples/**/x.json", "samples/x.json", false, true},
		{"a trailing double star matches what is under a directory", "samples/**", "samples/a/b.yaml", false, true},
		{"a leading slash anchors a base name", "/x.json", "sub/x.json", false, false},
		{"a leading slash matches at the root", "/x.json", "x.json", false, true},
		{"a trailing slash matches a directory", "testdata/", "a/testdata", true, true},
		{"a trailing slash does not match a file", "testdata/", "a/testdata", false, false},
		{"a character class matches one character", "v[12].yaml", "v2.yaml", false, true},
		{"a question mark matches one character", "v?.yaml", "v10.yaml", false, false},
		{"a name is not a prefix", "sample", "samples/x.yaml", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := NewExclude([]Pattern{{Glob: tc.glob, Origin: "--exclude"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, got := ex.Match(tc.path, tc.dir); got != tc.want {
				t.Errorf("%q matching %q (dir %v) = %v, want %v", tc.glob, tc.path, tc.dir, got, tc.want)
			}
		})
	}
}

func TestABadExclusionPatternIsRefusedNamingWhereItWasWritten(t *testing.T) {
	for _, tc := range []struct{ name, glob, want string }{
		{"an unclosed class", "[a-", `--exclude: exclude pattern "[a-": segment "[a-": syntax error in pattern`},
		{"a negation", "!keep.yaml", "negation (!) is not supported"},
		{"a backslash", `a\b`, "backslash is not supported"},
		{"an empty segment", "a//b", `segment "": want a name or a glob`},
		{"a parent segment", "../x", `segment "..": want a name or a glob`},
		{"the root itself", "/", "matches the scanned root itself"},
		{"blank", "  ", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewExclude([]Pattern{{Glob: tc.glob, Origin: "--exclude"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "--exclude: ") {
				t.Errorf("NewExclude(%q) = %v, want an error starting --exclude: and holding %q", tc.glob, err, tc.want)
			}
		})
	}
}

func TestAnIgnoreFileSkipsCommentsAndBlankLinesAndNamesTheLineOfABadPattern(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeFile(t, good, "# seed data, not manifests\n\n**/ratings_data.json  \r\nvendor-charts/\n")
	got, err := ReadIgnoreFile(good)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pattern{{"**/ratings_data.json", good + ":3"}, {"vendor-charts/", good + ":4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patterns = %+v, want %+v", got, want)
	}
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, "# ok\nok.json\n[oops\n")
	if _, err := ReadIgnoreFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":3: exclude pattern \"[oops\"") {
		t.Errorf("ReadIgnoreFile(bad) = %v, want an error naming %s:3", err, bad)
	}
}

// istioLike is a repository whose samples hold manifests beside a MongoDB seed file that is
// not JSON, as istio's samples/bookinfo does.
var istioLike = map[string]string{
	"samples/bookinfo/platform/kube/bookinfo.yaml":   "apiVersion: v1\nkind: Service\nmetadata:\n  name: ratings\n",
	"samples/bookinfo/src/mongodb/ratings_data.json": "{rating: 5}\n{rating: 4}\n",
	"samples/old/ingress.yaml":                       "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: old\n",
	"samples/old/nested/more.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n",
	"samples/old/README.md":                          "not a manifest",
	"docs/notes.json.txt":                            "not a manifest",
}

func TestAnExcludedPathIsNotReadAndIsListedWithItsPattern(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		excluded []inventory.ExcludedPath
		partial  bool
		objects  int
	}{
		{name: "without exclusion the seed file makes api-usage partial", partial: true, objects: 3},
		{
			name: "an excluded seed file is listed and leaves api-usage whole", patterns: []string{"**/ratings_data.json"},
			excluded: []inventory.ExcludedPath{{Path: "samples/bookinfo/src/mongodb/ratings_data.json", Pattern: "**/ratings_data.json", Origin: "--exclude"}},
			objects:  3,
		},
		{
			name: "an excluded directory is listed once and nothing under it is read", patterns: []string{"mongodb/", "samples/old"},
			excluded: []inventory.ExcludedPath{
				{Path: "samples/bookinfo/src/mongodb", Pattern: "mongodb/", Origin: "--exclude"},
				{Path: "samples/old", Pattern: "samples/old", Origin: "--exclude"},
			},
			objects: 1,
		},
		{
			name: "a non-manifest file matched by a pattern is not listed", patterns: []string{"*.md", "**/*.txt", "ratings_data.json"},
			excluded: []inventory.ExcludedPath{{Path: "samples/bookinfo/src/mongodb/ratings_data.json", Pattern: "ratings_data.json", Origin: "--exclude"}},
			objects:  3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			var patterns []Pattern
			for _, g := range tc.patterns {
				patterns = append(patterns, Pattern{Glob: g, Origin: "--exclude"})
			}
			ex, err := NewExclude(patterns)
			if err != nil {
				t.Fatal(err)
			}
			opts.Exclude = ex
			res := collectWith(t, opts, istioLike)
			if !reflect.DeepEqual(res.Excluded, tc.excluded) {
				t.Errorf("excluded = %+v, want %+v", res.Excluded, tc.excluded)
			}
			if res.Objects != tc.objects {
				t.Errorf("objects = %d, want %d", res.Objects, tc.objects)
			}
			doc := Inventory(res, testTime)
			if got := doc.Capabilities[inventory.CapAPIUsage].Partial; got != tc.partial {
				t.Errorf("api-usage partial = %v, want %v (%+v)", got, tc.partial, doc.Capabilities[inventory.CapAPIUsage])
			}
			if !reflect.DeepEqual(doc.FilesExcluded, tc.excluded) {
				t.Errorf("inventory filesExcluded = %+v, want %+v", doc.FilesExcluded, tc.excluded)
			}
		})
	}
}

func TestAnExcludedSymlinkedDirectoryIsListedInsteadOfWarnedAbout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		glob     string
		excluded int
		warnings int
	}{
		{glob: "linked", excluded: 1},
		{glob: "linked/", warnings: 1}, // a symlink is not a directory to a pattern
	} {
		ex, err := NewExclude([]Pattern{{Glob: tc.glob, Origin: "--exclude"}})
		if err != nil {
			t.Fatal(err)
		}
		opts := testOptions()
		opts.Exclude = ex
		res, err := Collect(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Excluded) != tc.excluded || len(res.Warnings) != tc.warnings {
			t.Errorf("%q: excluded %+v, warnings %v; want %d and %d", tc.glob, res.Excluded, res.Warnings, tc.excluded, tc.warnings)
		}
	}
}

func TestExcludedPathsPastTheBoundAreCounted(t *testing.T) {
	dir := t.TempDir()
	n := inventory.MaxExcludedPaths + 7
	for i := range n {
		writeFile(t, filepath.Join(dir, "seed", strings.Repeat("x", 1+i/100), "d"+strconv.Itoa(i)+".json"), "{")
	}
	writeFile(t, filepath.Join(dir, "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	ex, err := NewExclude([]Pattern{{Glob: "seed/**/*.json", Origin: "--exclude"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Exclude = ex
	res, err := Collect(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Excluded) != inventory.MaxExcludedPaths || res.ExcludedOmitted != 7 {
		t.Errorf("listed %d and counted %d more, want %d and 7", len(res.Excluded), res.ExcludedOmitted, inventory.MaxExcludedPaths)
	}
	data, err := json.Marshal(Inventory(res, testTime))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inventory.Parse(data); err != nil {
		t.Errorf("the inventory of a walk past the bound is not valid: %v", err)
	}
}

func TestListLeavesOutWhatCollectLeavesOut(t *testing.T) {
	dir := t.TempDir()
	for name, content := range istioLike {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	ex, err := NewExclude([]Pattern{{Glob: "ratings_data.json", Origin: "x:1"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := List(dir, 0, ex)
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range l.Paths {
		rel = append(rel, RelPath(l.Base, p))
	}
	want := []string{"samples/bookinfo/platform/kube/bookinfo.yaml", "samples/old/ingress.yaml", "samples/old/nested/more.yaml"}
	if !reflect.DeepEqual(rel, want) || len(l.Excluded) != 1 || l.Excluded[0].Origin != "x:1" {
		t.Errorf("List read %v and excluded %+v, want %v and the seed file", rel, l.Excluded, want)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// FuzzExcludeMatchesAsPathMatch holds the matcher to the standard library: a pattern anchored
// at the root and without '**' matches a path exactly when path.Match says so ('*' never
// crosses a '/'), and no pattern or path makes it panic.
func FuzzExcludeMatchesAsPathMatch(f *testing.F) {
	for _, s := range [][2]string{{"samples/*.json", "samples/x.json"}, {"/a/[b-c]?", "a/bz"}, {"**/x", "a/b/x"}, {"a/**/b/**", "a/b/c/b/d"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, rel string) {
		ex, err := NewExclude([]Pattern{{Glob: glob, Origin: "fuzz"}})
		if err != nil {
			return
		}
		_, got := ex.Match(rel, false)
		anchored := strings.Trim(glob, "/")
		if !strings.Contains(glob, "**") && strings.Contains(strings.TrimSuffix(glob, "/"), "/") && !strings.HasSuffix(glob, "/") {
			want, _ := path.Match(anchored, rel)
			if rel == "" || rel == "." {
				want = false
			}
			if got != want {
				t.Errorf("Match(%q, %q) = %v, path.Match says %v", glob, rel, got, want)
			}
		}
	})
}
