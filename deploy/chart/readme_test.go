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
		want:    []string{"name: us-agent", "--target=1.36"},
		notWant: []string{"us-server", "--server="},
	},
	"agent-plus-server": {
		want: []string{"--server=http://us-server.upgradescope.svc.cluster.local:80", "kind: PersistentVolumeClaim",
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
				for _, name := range secretsToCreate(t, out) {
					if !regexp.MustCompile(`create secret (generic|tls) ` + regexp.QuoteMeta(name) + `\b`).Match(raw) {
						t.Errorf("the recipe needs Secret %q, which nothing creates: %s does not say to create it", name, readme)
					}
				}
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

// secretsToCreate: the Secrets a render mounts or names that neither the chart nor cert-manager
// creates, so the reader must. Without them the pods never start (CreateContainerConfigError)
// and an Ingress serves its controller's fake certificate.
func secretsToCreate(t *testing.T, rendered string) []string {
	t.Helper()
	made := map[string]bool{}
	var named []string
	for _, obj := range objects(t, rendered) {
		switch obj["kind"] {
		case "Secret":
			made[dig(obj, "metadata")["name"].(string)] = true
		case "Certificate":
			made[dig(obj, "spec")["secretName"].(string)] = true
		case "Ingress":
			if !hasCertManagerAnnotation(dig(obj, "metadata", "annotations")) {
				for _, tls := range list(dig(obj, "spec")["tls"]) {
					named = append(named, tls["secretName"].(string))
				}
			}
		default:
			if pod, ok := podSpec(obj); ok {
				for _, vol := range list(pod["volumes"]) {
					if secret, ok := vol["secret"].(map[string]any); ok {
						named = append(named, secret["secretName"].(string))
					}
				}
			}
		}
	}
	var out []string
	for _, name := range named {
		if !made[name] && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func hasCertManagerAnnotation(annotations map[string]any) bool {
	for k := range annotations {
		if strings.HasPrefix(k, "cert-manager.io/") {
			return true
		}
	}
	return false
}
