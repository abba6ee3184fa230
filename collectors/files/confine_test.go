package files

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Options.Confine is how upgradescope mcp keeps a walk under --root: a symlinked file whose
// target lies outside is named and not read, whatever way the link leads out (absolute,
// relative, through another link, into a sibling whose name starts like the root's); one
// that stays inside is read as any file is.
func TestAConfinedWalkReadsNoSymlinkLeadingOut(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	sibling := filepath.Join(parent, "root-sibling") // "root" is a prefix of its name
	for path, text := range map[string]string{
		filepath.Join(root, "manifests", "own.yaml"): ing("own"),
		filepath.Join(root, "shared", "inside.yaml"): ing("inside"),
		filepath.Join(parent, "outside.yaml"):        ing("outside"),
		filepath.Join(sibling, "sibling.yaml"):       ing("sibling"),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	manifests := filepath.Join(root, "manifests")
	for link, target := range map[string]string{
		"absolute.yaml":   filepath.Join(parent, "outside.yaml"),
		"relative.yaml":   "../../outside.yaml",
		"sibling.yaml":    filepath.Join(sibling, "sibling.yaml"),
		"chain-target":    filepath.Join(parent, "outside.yaml"),
		"chain.yaml":      "chain-target", // inside, to a link that leads out
		"inside.yaml":     "../shared/inside.yaml",
		"dangling.yaml":   filepath.Join(parent, "absent.yaml"),
		"outside-dir.yml": parent,
	} {
		must(t, os.Symlink(target, filepath.Join(manifests, link)))
	}

	confined := testOptions()
	confined.Confine = root
	res, err := Collect(manifests, confined)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(res), []string{"inside", "own"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects read = %q, want only %q: a link out of the root was followed", got, want)
	}
	out := map[string]string{}
	for _, w := range res.Warnings {
		out[w.File] = w.Message
	}
	for _, link := range []string{"absolute.yaml", "relative.yaml", "sibling.yaml", "chain.yaml"} {
		if msg := out[link]; !strings.Contains(msg, "symlink out of "+root) {
			t.Errorf("%s: warning %q, want it named as a symlink out of %s", link, msg, root)
		}
	}
	if c := apiUsageCapability(res); !c.Partial {
		t.Errorf("api-usage = %+v, want partial: a link not read might have held a removed API", c)
	}

	// The same walk unconfined follows the links: the test would see a confinement that
	// confined nothing.
	res, err = Collect(manifests, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); !strings.Contains(strings.Join(got, " "), "outside") || !strings.Contains(strings.Join(got, " "), "sibling") {
		t.Errorf("unconfined objects = %q, want the linked files outside read", got)
	}
}

// A walk of a root that is the confining directory itself reads it whole.
func TestAConfinedWalkOfTheRootItselfReadsIt(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "i.yaml"), []byte(ing("x")), 0o600))
	opts := testOptions()
	opts.Confine = root + string(filepath.Separator) // as a caller may write it
	res, err := Collect(root, opts)
	if err != nil || res.Objects != 1 || len(res.Warnings) != 0 {
		t.Errorf("Collect = %+v, %v; want the one object and no warning", res, err)
	}
}

// names are the names of the objects a walk saw, sorted and once each.
func names(res *Result) []string {
	var out []string
	for _, u := range res.APIUsage {
		for _, o := range u.Objects {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
