package repo_test

import (
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func TestVersionsAndChartsFromAnOCIRegistry(t *testing.T) {
	reg := charttest.ServeOCI(t, web...)
	r := newReader(t, repo.Options{})
	ref := repo.Ref{Repository: reg.URL(), Chart: "web"}

	got, err := r.Versions(ctxFor(t), ref)
	if err != nil {
		t.Fatal(err)
	}
	want := []repo.Version{{Version: "0.9.0"}, {Version: "1.0.0"}, {Version: "1.1.0"}, {Version: "1.10.0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("versions = %+v, want tags ascending and not Known: %+v", got, want)
	}

	ch, err := r.Chart(ctxFor(t), ref, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Name != "web" || ch.Metadata.Version != "1.0.0" ||
		ch.Metadata.AppVersion != "1.0" || ch.Metadata.KubeVersion != "<1.36.0-0" {
		t.Errorf("metadata = %+v", ch.Metadata)
	}

	_, err = r.Chart(ctxFor(t), ref, "9.9.9")
	wantErr(t, err, "pull "+reg.URL()+"/web 9.9.9")
}
