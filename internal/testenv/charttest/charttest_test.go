package charttest_test

import (
	"os"
	"path/filepath"
	"testing"

	helmregistry "helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

var web = []charttest.Chart{
	{Name: "web", Version: "1.0.0", AppVersion: "1.0", KubeVersion: "<1.36.0-0", Templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}},
	{Name: "web", Version: "1.1.0", AppVersion: "1.1"},
}

func TestTheIndexListsEveryVersionPackaged(t *testing.T) {
	r := charttest.ServeIndex(t, web...)
	idx, err := repo.LoadIndexFile(filepath.Join(r.Dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(idx.Entries["web"]); got != 2 {
		t.Fatalf("index lists %d versions of web, want 2", got)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "web-1.0.0.tgz")); err != nil {
		t.Fatal(err)
	}
}

func TestTheRegistryTagsEveryVersionPushed(t *testing.T) {
	r := charttest.ServeOCI(t, web...)
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	tags, err := client.Tags(r.Host + "/charts/web")
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 2 {
		t.Fatalf("tags = %v, want two", tags)
	}
}
