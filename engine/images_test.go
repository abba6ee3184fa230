package engine_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
)

func TestAnEOLAddonFoundInManifestsNamesTheWorkloadRunningItWithFileAndLine(t *testing.T) {
	eng := newEngine(t)
	res, err := files.Collect("../examples/manifests", files.Options{
		Observe: eng.Observe(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Evaluate(context.Background(), files.Inventory(res, now), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Targets[0].Findings {
		if f.Key != "eol-addon/ingress-nginx" {
			continue
		}
		want := []inventory.ObjectRef{{Namespace: "ingress-nginx", Name: "ingress-nginx-controller", File: "ingress-controller.yaml", Line: 9}}
		if !reflect.DeepEqual(f.Objects, want) {
			t.Errorf("objects = %+v, want %+v", f.Objects, want)
		}
		return
	}
	t.Fatal("no eol-addon/ingress-nginx finding")
}

// A custom pack reads input.inventory.workloadImages whole, though the built-in rules read
// only the images an add-on matcher could claim.
func TestACustomPackSeesEveryImage(t *testing.T) {
	pack := writePack(t, map[string]string{"images.rego": `package upgradescope.custom.images

findings contains f if {
	some t in input.targets
	refs := [concat(":", [w.repository, v.tag]) | some w in input.inventory.workloadImages; some v in w.versions]
	f := {"key": "images/all", "category": "images", "severity": "info", "target": t, "title": concat(",", refs)}
}
`})
	eng := newEngine(t, engine.WithPolicy(pack))
	inv := prodInventory()
	inv.WorkloadImages = []inventory.WorkloadImage{
		{Repository: "registry.example.com/shop/api", Versions: []inventory.ImageVersion{{Tag: "1.0", Namespaces: []string{"shop"}}, {Tag: "1.1", Namespaces: []string{"shop"}}}},
		{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []inventory.ImageVersion{{Tag: "v1.9.4", Namespaces: []string{"edge"}}}},
	}
	r, err := eng.Evaluate(context.Background(), inv, []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, f := range r.Targets[0].Findings {
		if f.Key == "images/all" {
			titles = append(titles, f.Title)
		}
	}
	want := "registry.example.com/shop/api:1.0,registry.example.com/shop/api:1.1,registry.k8s.io/ingress-nginx/controller:v1.9.4"
	if strings.Join(titles, "|") != want {
		t.Errorf("custom finding titles = %q, want %q", titles, want)
	}
}

func TestACustomPackDeclaresTheRepositoriesItReadsInFull(t *testing.T) {
	pack := writePack(t, map[string]string{
		"images.rego":                          "package upgradescope.custom.images\n\nfindings := set()\n",
		"upgradescope/custom/images/data.json": `{"observe": {"images": ["registry.example.com/payments/"]}}`,
	})
	watch := newEngine(t, engine.WithPolicy(pack)).Observe().Images
	if !watch.Observes("registry.example.com/payments/api", nil) || watch.Observes("registry.example.com/shop/api", nil) {
		t.Errorf("watch = %+v, want payments observed and shop not", watch.Repositories)
	}
	bad := writePack(t, map[string]string{
		"images.rego":                          "package upgradescope.custom.images\n\nfindings := set()\n",
		"upgradescope/custom/images/data.json": `{"observe": {"images": "registry.example.com/"}}`,
	})
	if _, err := engine.New(context.Background(), engine.WithPolicy(bad)); err == nil || !strings.Contains(err.Error(), "observe.images must be a list") {
		t.Errorf("err = %v, want the declaration refused", err)
	}
}

// maxInventoryBytes bounds the inventory of the many-images corpus at 20,000 objects (6,300
// distinct images, 200 CRDs, 5% of objects at flagged APIs). Every part of it is bounded by
// a constant, not by the objects: at most inventory.MaxListedImages image versions nobody
// observes (about 110 bytes each: repository, tag, namespaces; 270 KB), the add-on images
// with at most 10 workloads each, at most 100 object references per flagged API (130 KB),
// one entry per distinct CRD (40 KB). Measured: 412 KB, and 454 KB at 100,000 objects; the
// shape before (one record per image with its label sets) was 1.97 MB at 20,000 and 9.4 MB
// at 100,000. 600 KB leaves room for more add-ons, not for growth with the objects.
const maxInventoryBytes = 600 << 10

func TestTheInventoryOfARepositoryWithManyImagesStaysSmall(t *testing.T) {
	dir := t.TempDir()
	if err := corpus.Write(dir, 20_000, corpus.ManyImages); err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t)
	res, err := files.Collect(dir, files.Options{
		Observe: eng.Observe(),
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(files.Inventory(res, now))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxInventoryBytes {
		t.Errorf("inventory is %d KB, want at most %d KB", len(b)>>10, maxInventoryBytes>>10)
	}
	if res.ImagesOmitted == 0 || len(res.WorkloadImages) < inventory.MaxListedImages {
		t.Errorf("listed %d repositories, omitted %d containers: the corpus should overflow the listing", len(res.WorkloadImages), res.ImagesOmitted)
	}
}
