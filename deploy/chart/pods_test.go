package chart

import (
	"fmt"
	"testing"
)

// podValues are the renders whose pods mount Secrets: the goldens, plus an agent pushing to an
// external server and polling bundles with a token.
func podValues() map[string]string {
	out := map[string]string{}
	for _, g := range goldens {
		out[g.name] = g.values
	}
	out["agent-to-a-hub-with-a-bundle-token"] = `
agent: {serverUrl: "https://hub.example.com", serverTokenSecret: {name: hub-token}}
bundles:
  urls: ["https://bundles.example/kb.tar.gz"]
  verificationKey: "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n"
  tokenSecret: {name: bundle-token}
`
	return out
}

// Kubelet writes Secret volume files as root:root; a file others cannot read (0400, 0440)
// is readable by a non-root container only when fsGroup gives it the container's group.
func TestEveryPodMountingAnOwnerOnlySecretHasFSGroupEqualToItsUser(t *testing.T) {
	for name, v := range podValues() {
		t.Run(name, func(t *testing.T) {
			for _, obj := range objects(t, render(t, values(t, v))) {
				pod, ok := podSpec(obj)
				if !ok {
					continue
				}
				for _, vol := range list(pod["volumes"]) {
					secret, ok := vol["secret"].(map[string]any)
					if !ok || !ownerOnly(secret["defaultMode"]) {
						continue
					}
					fsGroup := fmt.Sprint(dig(pod, "securityContext")["fsGroup"])
					for _, c := range list(pod["containers"]) {
						if user := fmt.Sprint(dig(c, "securityContext")["runAsUser"]); fsGroup != user {
							t.Errorf("%s %s: Secret volume %v has mode %v but fsGroup %s, container %v runs as %s",
								obj["kind"], dig(obj, "metadata")["name"], vol["name"], secret["defaultMode"], fsGroup, c["name"], user)
						}
					}
				}
			}
		})
	}
}

// ownerOnly: a file mode others cannot read. Absent, Kubernetes uses 0644.
func ownerOnly(mode any) bool {
	m, ok := mode.(float64)
	return ok && int(m)&0o004 == 0
}

func podSpec(obj map[string]any) (map[string]any, bool) {
	spec := dig(obj, "spec", "template", "spec")
	return spec, spec != nil
}

func list(v any) []map[string]any {
	var out []map[string]any
	items, _ := v.([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
