package corpus

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/policies"
)

// kbProbes are the probes the built-in knowledge base declares, as an agent observes them.
func kbProbes() []inventory.ProbeSpec {
	raw, err := fs.ReadFile(policies.KB, "upgradescope/kb/probes/data.json")
	if err != nil {
		panic(err) // embedded; a build without it cannot bench anything
	}
	var specs []inventory.ProbeSpec
	if err := json.Unmarshal(raw, &specs); err != nil {
		panic(err)
	}
	return specs
}

// observeProbes writes what an agent observes for the kb's probes on a cluster of workloads
// pod templates spread over namespaces: most probes find nothing, and the host-path and
// toleration probes find what a real cluster holds (log collectors mounting /var/log, system
// DaemonSets tolerating the control plane), with a few Docker sockets left from an old CI.
func observeProbes(doc *inventory.Document, rng *rand.Rand, workloads int, nsName func(int) string) {
	for _, spec := range kbProbes() {
		p := inventory.Probe{ID: "kb/" + spec.ID, Probe: spec, Available: true, Examined: workloads}
		switch spec.ID {
		case "pod-host-paths":
			observeValues(&p, rng, workloads/20, nsName, []string{"/var/log", "/var/lib/docker/containers", "/var/lib/kubelet", "/run/containerd", "/var/run/docker.sock"})
		case "pod-toleration-keys":
			observeValues(&p, rng, workloads/10, nsName, []string{"node-role.kubernetes.io/control-plane", "node.kubernetes.io/not-ready", "dedicated", "CriticalAddonsOnly"})
		}
		doc.Probes = append(doc.Probes, p)
	}
	inventory.SortProbes(doc.Probes)
}

// observeValues records n matched workloads, each holding one of values (the last rarely).
func observeValues(p *inventory.Probe, rng *rand.Rand, n int, nsName func(int) string, values []string) {
	counts := map[string]int{}
	for i := range n {
		v := values[rng.IntN(len(values)-1)]
		if i%50 == 49 {
			v = values[len(values)-1]
		}
		counts[v]++
		p.Count++
		if len(p.Objects) == inventory.MaxObjectRefs {
			p.ObjectsOmitted++
			continue
		}
		p.Objects = append(p.Objects, inventory.ProbeObject{Group: "apps", Kind: "DaemonSet",
			Namespace: nsName(i), Name: fmt.Sprintf("agent-%d", i), Values: []string{v}})
	}
	for _, v := range values {
		if counts[v] > 0 {
			p.Values = append(p.Values, inventory.ProbeValue{Value: v, Count: counts[v]})
		}
	}
	slices.SortFunc(p.Values, func(a, b inventory.ProbeValue) int { return strings.Compare(a.Value, b.Value) })
}
