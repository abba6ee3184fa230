package probe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// hostileShapes are objects whose matching costs the square of their size without a bound, and
// a large ordinary one, each with the probe that walks it.
func hostileShapes() map[string]struct {
	spec Spec
	obj  any
} {
	shared := map[string]any{"s": strings.Repeat("y", 200_000)}
	aliases := map[string]any{}
	for i := range 4000 {
		aliases[fmt.Sprintf("r%d", i)] = map[string]any{"s": shared["s"]} // plain() copies each alias's map, not its strings
	}
	deep := any(map[string]any{"leaf": "v"})
	for d := 59; d >= 0; d-- {
		m := map[string]any{strings.Repeat("K", 1000) + fmt.Sprint(d): deep}
		for s := range 300 {
			m[fmt.Sprintf("s%d", s)] = "v"
		}
		deep = m
	}
	wide := map[string]any{}
	for i := range 20_000 {
		wide[fmt.Sprintf("k%07d", i)] = fmt.Sprintf("%040d", i*7919%20_000)
	}
	cm := func(id, path, match string, data any) struct {
		spec Spec
		obj  any
	} {
		return struct {
			spec Spec
			obj  any
		}{Spec{ID: id, Kinds: []string{"core/ConfigMap"}, Path: path, Match: match, Values: true}, map[string]any{"data": data}}
	}
	return map[string]struct {
		spec Spec
		obj  any
	}{
		"a map of 4,000 aliases of a 200 KB subtree": cm("alias", "data[*]", "", aliases),
		"a deep object of long keys, absent":         cm("deep", "data"+strings.Repeat("[*]", 62)+".x", "absent", deep),
		"a ConfigMap of 20,000 values":               cm("wide", "data[*]", "", wide),
	}
}

// BenchmarkObserveSteps reports what a step of matching costs on each shape (ns/step): the
// bounds are counted in steps, so a step must cost about the same whatever the shape. On this
// project's 2-core machine under load (2026-12-01): aliases 11–13 ns/step, the deep object
// 33–44, the ConfigMap 14–17; the first two stop just past MaxProbeSteps (4.2 M steps, 50 and
// 140–190 ms), where unbounded they ran for seconds each.
func BenchmarkObserveSteps(b *testing.B) {
	for name, shape := range hostileShapes() {
		b.Run(name, func(b *testing.B) {
			set := mustSetB(b, shape.spec)
			group, kind, _ := SplitKind(shape.spec.Kinds[0])
			var steps int64
			var elapsed time.Duration
			for b.Loop() {
				o := set.NewObserver()
				start := time.Now()
				o.Observe(shape.obj, group, kind, inventory.ObjectRef{Name: "x"})
				elapsed += time.Since(start)
				steps += o.work.steps[0].Load() + StepsPerObject // the object's free steps too
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
		})
	}
}

func mustSetB(b *testing.B, specs ...Spec) *Set {
	b.Helper()
	declared := make([]Declared, len(specs))
	for i, s := range specs {
		declared[i] = Declared{ID: "custom/bench/" + s.ID, Spec: s}
	}
	s, err := NewSet(declared)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkObserveOrdinaryObjects is the steady state of one probe over ordinary objects, one
// observer for them all, as a collection observes a repository's workloads: 290–330 ns, 32 B
// and 2 allocations an object on the same machine, where matching before the bounds took
// 980–1,005 ns, 432 B and 14 (spelling every match's concrete path, marshalling its value).
func BenchmarkObserveOrdinaryObjects(b *testing.B) {
	pod := map[string]any{"spec": map[string]any{
		"volumes":     []any{map[string]any{"name": "a", "hostPath": map[string]any{"path": "/var/run/docker.sock"}}, map[string]any{"name": "b", "emptyDir": map[string]any{}}},
		"tolerations": []any{map[string]any{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}},
	}}
	set := mustSetB(b, Spec{ID: "sock", Kinds: []string{"core/Pod"}, Path: "spec.volumes[*].hostPath.path", Values: true})
	o := set.NewObserver()
	for b.Loop() {
		o.Observe(pod, "", "Pod", inventory.ObjectRef{Name: "x"})
	}
	if o.work.steps[0].Load() != 0 {
		b.Fatalf("an ordinary object took %d steps past its free ones", o.work.steps[0].Load())
	}
}
