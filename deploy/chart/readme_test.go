package chart

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// recipe is a values block a README marks `<!-- recipe: NAME -->`.
var recipe = regexp.MustCompile("(?s)<!-- recipe: ([a-z-]+) -->\n```yaml\n(.*?)```")

// What each recipe must install, whichever README shows it.
var recipeWants = map[string]struct{ want, notWant []string }{
	"agent-only": {
		want:    []string{"name: us-agent", "--targets=1.36"},
		notWant: []string{"us-server", "--server-url"},
	},
	"agent-plus-server": {
		want: []string{"--server-url=http://us-server.upgradescope.svc.cluster.local:80", "kind: PersistentVolumeClaim",
			"--require-read-credential", "secretName: upgradescope-tokens"},
	},
	"fleet-hub": {
		want: []string{"replicas: 2", "--db-url-file=/etc/upgradescope/db/url", "kind: PodDisruptionBudget", "kind: Ingress",
			"kind: ServiceMonitor", "kind: PrometheusRule", "--read-token-file"},
		notWant: []string{"name: us-agent", "kind: PersistentVolumeClaim", "--require-read-credential"},
	},
}

func TestTheREADMERecipesRender(t *testing.T) {
	for _, readme := range []string{"upgradescope/README.md", "../../README.md"} {
		raw, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range recipe.FindAllStringSubmatch(string(raw), -1) {
			name, vals := m[1], m[2]
			names = append(names, name)
			t.Run(readme+"/"+name, func(t *testing.T) {
				wants, ok := recipeWants[name]
				if !ok {
					t.Fatalf("recipe %q has no expectations in recipeWants", name)
				}
				out := render(t, values(t, vals))
				for _, w := range wants.want {
					if !strings.Contains(out, w) {
						t.Errorf("rendered recipe lacks %q", w)
					}
				}
				for _, w := range wants.notWant {
					if strings.Contains(out, w) {
						t.Errorf("rendered recipe has %q", w)
					}
				}
			})
		}
		slices.Sort(names)
		if want := []string{"agent-only", "agent-plus-server", "fleet-hub"}; !slices.Equal(names, want) {
			t.Errorf("%s shows recipes %v, want %v", readme, names, want)
		}
	}
}
