package chart

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

// imageBinary is where the image puts the binary (its entrypoint), not on PATH: a command the
// notes print for `kubectl exec` must name it by this path.
const imageBinary = "/upgradescope"

// renderNotes answers the install notes helm prints for values.
func renderNotes(t *testing.T, values map[string]any) string {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := util.ToRenderValuesWithSchemaValidation(chrt, values, release, common.DefaultCapabilities, false)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(chrt, vals)
	if err != nil {
		t.Fatal(err)
	}
	return out[chartDir+"/templates/NOTES.txt"]
}

var execCommand = regexp.MustCompile(`(?s)exec deploy/\S+ -- \\\s*\n\s*(\S+) (.*?)\n`)

// The read-token command the notes print runs in the server's image and mints a token.
func TestTheNotesPrintACommandThatRunsInTheImage(t *testing.T) {
	notes := renderNotes(t, values(t, goldenValues("agent-plus-server")))
	m := execCommand.FindStringSubmatch(notes)
	if m == nil {
		t.Fatalf("the notes print no kubectl exec command:\n%s", notes)
	}
	if m[1] != imageBinary {
		t.Errorf("the notes exec %q, want the image's %s: the binary is not on PATH", m[1], imageBinary)
	}
	db := filepath.Join(t.TempDir(), "upgradescope.db")
	args := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(m[2], "/data/upgradescope.db", db), "'", ""))
	if out, err := exec.Command(binary(t), args...).CombinedOutput(); err != nil {
		t.Errorf("upgradescope %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
