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
// pod templates spread over namespaces: most probes find nothing, and a few workloads left
// from older days mount the Docker socket or tolerate only the master taint.
func observeProbes(doc *inventory.Document, rng *rand.Rand, workloads int, nsName func(int) string) {
	for _, spec := range kbProbes() {
		p := inventory.Probe{ID: "kb/" + spec.ID, Probe: spec, Available: true, Examined: workloads}
		switch spec.ID {
		case "pod-docker-socket":
			observeValues(&p, rng, max(workloads/500, 1), nsName, []string{"/var/run/docker.sock", "/run/docker.sock"})
		case "pod-master-toleration":
			observeValues(&p, rng, max(workloads/200, 1), nsName, []string{"node-role.kubernetes.io/master"})
		}
		doc.Probes = append(doc.Probes, p)
	}
	inventory.SortProbes(doc.Probes)
}

// observeValues records n matched workloads, each holding one of values.
func observeValues(p *inventory.Probe, rng *rand.Rand, n int, nsName func(int) string, values []string) {
	counts := map[string]int{}
	for i := range n {
		v := values[rng.IntN(len(values))]
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
