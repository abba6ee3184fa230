package preflight

import (
	"fmt"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestTheTemplateStoreGivesBackWhatWasKeptAcrossMerges(t *testing.T) {
	var a, b templateStore
	a.add(inventory.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", File: "a.yaml", Line: 3}, map[string]any{"app": "web"}, 3)
	a.add(inventory.ObjectRef{Kind: "Pod", Namespace: "ops", Name: "debug", File: "a.yaml", Line: 9}, nil, 1)
	b.add(inventory.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "db", File: "b.yaml", Line: 1},
		map[string]any{"app": "db", "bad\x00key": "x", "tier": "back", "n": 1}, 2)
	b.add(inventory.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api", File: "a.yaml", Line: 20}, map[string]any{}, 0)
	a.merge(&b)
	var got []string
	for _, tpl := range a.inNamespaces(map[string]bool{"shop": true})["shop"] {
		got = append(got, fmt.Sprintf("%s %s/%s %s:%d ×%d app=%q tier=%q bad=%v", tpl.ref.Kind, tpl.ref.Namespace, tpl.ref.Name,
			tpl.ref.File, tpl.ref.Line, tpl.replicas, tpl.labels.Get("app"), tpl.labels.Get("tier"), tpl.labels.Has("bad\x00key")))
	}
	want := []string{
		`Deployment shop/web a.yaml:3 ×3 app="web" tier="" bad=false`,
		`StatefulSet shop/db b.yaml:1 ×2 app="db" tier="back" bad=false`,
		`Deployment shop/api a.yaml:20 ×0 app="" tier="" bad=false`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("templates\n%q\nwant\n%q", got, want)
	}
	if len(a.files) != 2 {
		t.Errorf("files %v, want a.yaml and b.yaml once each", a.files)
	}
}
