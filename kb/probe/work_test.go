package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// configMapProbe reads every value of a ConfigMap's data, as a pack might.
func configMapProbe(id string) Spec {
	return Spec{ID: id, Kinds: []string{"core/ConfigMap"}, Path: "data[*]", Values: true}
}

func configMap(name string, data any) input {
	return input{"", "ConfigMap", inventory.ObjectRef{Namespace: "ns", Name: name}, map[string]any{"data": data}}
}

// wideData is a ConfigMap's data of n values, in no order.
func wideData(n int) map[string]any {
	data := map[string]any{}
	for i := range n {
		data[fmt.Sprintf("k%06d", i)] = fmt.Sprintf("%040d", i*7919%n)
	}
	return data
}

func TestAProbePastItsBoundIsAGapNamingTheBoundAndTheOthersStay(t *testing.T) {
	shapes := hostileShapes()
	for _, name := range []string{"a map of 4,000 aliases of a 200 KB subtree", "a deep object of long keys, absent"} {
		t.Run(name, func(t *testing.T) {
			hostile := shapes[name]
			lb := Spec{ID: "lb", Kinds: []string{"core/ConfigMap"}, Path: "metadata.name", Values: true}
			set := mustSet(t, hostile.spec, lb)
			obj := hostile.obj.(map[string]any)
			obj["metadata"] = map[string]any{"name": "cm"}
			o := observeAll(set, []input{{"", "ConfigMap", inventory.ObjectRef{Name: "cm"}, obj}})
			got := o.Probes()
			if got[0].Available || !strings.Contains(got[0].Reason, "probe.MaxProbeSteps") || got[0].Count != 0 || got[0].Objects != nil || got[0].Values != nil || got[0].Examined != 1 {
				t.Errorf("the hostile probe's observation = %+v, want a gap naming MaxProbeSteps with only examined kept", got[0])
			}
			if !got[1].Available || got[1].Count != 1 {
				t.Errorf("the ordinary probe's observation = %+v, want it observed", got[1])
			}
		})
	}
}

func TestProbesPastTheCollectionsBoundTogetherAreAllGaps(t *testing.T) {
	var specs []Spec
	for i := range 10 { // each just past MaxProbeSteps: 40 M steps in all
		specs = append(specs, configMapProbe(fmt.Sprintf("p%d", i)))
	}
	specs = append(specs, Spec{ID: "cheap", Kinds: []string{"core/Service"}, Path: "spec.type"})
	set := mustSet(t, specs...)
	o := observeAll(set, []input{configMap("big", hostileShapes()["a map of 4,000 aliases of a 200 KB subtree"].obj.(map[string]any)["data"])})
	for _, p := range o.Probes() {
		if p.Available || !strings.Contains(p.Reason, "probe.MaxCollectionSteps") {
			t.Errorf("%s = %+v, want a gap naming MaxCollectionSteps", p.ID, p)
		}
	}
}

// What a probe costs over ordinary objects is free, however many there are: no repository is
// too large for its probes.
func TestOrdinaryObjectsCostNothingAgainstTheBounds(t *testing.T) {
	set := mustSet(t,
		Spec{ID: "sock", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true},
		Spec{ID: "tolerations", PodTemplate: true, Path: "spec.tolerations[*].key", Values: true},
		Spec{ID: "limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: MatchAbsent, Values: true},
		configMapProbe("data"),
	)
	o := set.NewObserver()
	for i := range 20_000 {
		deploy := decode(t, fmt.Sprintf(`{"spec": {"template": {"spec": {
			"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}, {"name": "b"}],
			"volumes": [{"name": "v", "hostPath": {"path": "/var/run/docker.sock"}}],
			"tolerations": [{"key": "node-role.kubernetes.io/master"}, {"key": "k%d"}]}}}}`, i))
		o.Observe(deploy, "apps", "Deployment", inventory.ObjectRef{Name: fmt.Sprint(i)})
		o.Observe(map[string]any{"data": wideData(50)}, "", "ConfigMap", inventory.ObjectRef{Name: fmt.Sprint(i)})
	}
	for i := range o.work.steps {
		if n := o.work.steps[i].Load(); n != 0 {
			t.Errorf("%s took %d steps past its free ones", o.set.probes[i].id, n)
		}
	}
	for _, p := range o.Probes() {
		if !p.Available || p.Examined != 20_000 || p.Count != 20_000 {
			t.Errorf("%s = available %v, examined %d, count %d", p.ID, p.Available, p.Examined, p.Count)
		}
	}
}

// Whether a probe is past a bound depends on what it matched, never on the order objects come
// in or how many workers share the walk: one observer, forks working concurrently in any
// order, and observers with bounds of their own merged in order all answer the same.
func TestTheBoundsHoldAlikeWhateverTheOrderAndTheWorkers(t *testing.T) {
	one := observeAll(mustSet(t, configMapProbe("wide")), []input{configMap("probe-cost", wideData(20_000))})
	past := one.work.steps[0].Load()
	if past == 0 {
		t.Fatal("a ConfigMap of 20,000 values cost no more than an ordinary object: the test needs one that does")
	}
	within := int(MaxProbeSteps / past)
	for _, n := range []int{within, within + 1} {
		t.Run(fmt.Sprintf("%d ConfigMaps, each %d steps past its free ones", n, past), func(t *testing.T) {
			set := mustSet(t, configMapProbe("wide"), Spec{ID: "name", Kinds: []string{"core/ConfigMap"}, Path: "metadata.name"})
			var objs []input
			for i := range n {
				objs = append(objs, configMap(fmt.Sprintf("cm%d", i), wideData(20_000)))
			}
			want := observeAll(set, objs).Probes() // name, then wide
			if !want[0].Available || want[1].Available != (n == within) {
				t.Fatalf("one observer: name available %v, wide %v; want the wide probe past its bound only with %d", want[0].Available, want[1].Available, within+1)
			}
			for seed := range 3 {
				if got := observeForked(set, objs, seed); !reflect.DeepEqual(got, want) {
					t.Errorf("forks in order %d: %+v, one observer %+v", seed, got, want)
				}
				if got := observeMerged(set, objs, 3); !reflect.DeepEqual(got, want) {
					t.Errorf("separate observers merged: %+v, one observer %+v", got, want)
				}
			}
		})
	}
}

// observeForked shares objs, shuffled by seed, among forks of one observer working at once.
func observeForked(set *Set, objs []input, seed int) []inventory.Probe {
	order := rand.New(rand.NewPCG(uint64(seed), 1)).Perm(len(objs))
	root := set.NewObserver()
	forks := []*Observer{root.Fork(), root.Fork(), root.Fork()}
	var wg sync.WaitGroup
	for w, f := range forks {
		wg.Go(func() {
			for k, i := range order {
				if k%len(forks) == w {
					x := objs[i]
					f.Observe(x.obj, x.group, x.kind, x.ref)
				}
			}
		})
	}
	wg.Wait()
	for _, f := range forks {
		root.Merge(f)
	}
	return sortedObservation(root.Probes())
}

// observeMerged observes objs in parts, each with an observer of its own, merged in order.
func observeMerged(set *Set, objs []input, parts int) []inventory.Probe {
	root := set.NewObserver()
	for p := range parts {
		o := set.NewObserver()
		for i := p; i < len(objs); i += parts {
			o.Observe(objs[i].obj, objs[i].group, objs[i].kind, objs[i].ref)
		}
		root.Merge(o)
	}
	return sortedObservation(root.Probes())
}

// sortedObservation orders what depends on the order objects came in (the object list) so
// that arrangements compare.
func sortedObservation(ps []inventory.Probe) []inventory.Probe {
	for i := range ps {
		objs := ps[i].Objects
		for a := 1; a < len(objs); a++ {
			for b := a; b > 0 && objs[b].Name < objs[b-1].Name; b-- {
				objs[b], objs[b-1] = objs[b-1], objs[b]
			}
		}
	}
	return ps
}

// render writes what encoding/json writes, cut to the string bound, however large the value
// and however often it holds one subtree.
func TestRenderWritesWhatEncodingJSONWritesCut(t *testing.T) {
	long := strings.Repeat("é<&>\u2028", inventory.MaxStringLength)
	shared := map[string]any{"s": long, "n": int64(1), "f": 1.5e300, "b": true, "z": nil}
	many := map[string]any{}
	for i := range 1000 {
		many[fmt.Sprintf("r%04d", i)] = shared
	}
	values := map[string]any{
		"a map":                      map[string]any{"b": []any{int64(1), 2.5, "x<y", nil, true}, "a": map[string]any{}},
		"HTML and line separators":   []any{"<script>&\u2028\u2029"},
		"invalid UTF-8":              []any{"a\xffb", "\xed\xa0\x80"},
		"a long string in a list":    []any{long},
		"a long key":                 map[string]any{long: 1},
		"a subtree held 1,000 times": many,
		"numbers":                    []any{0.1, 1e21, 1e-7, -0.0, int64(math.MaxInt64), float64(1 << 53), uint64(math.MaxUint64), 3},
		"an empty list":              []any{},
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := render(v, nil), inventory.BoundString(string(b)); got != want {
				t.Errorf("render = %.200q…, encoding/json %.200q…", got, want)
			}
		})
	}
}

// FuzzRender holds render to encoding/json on any JSON value but a string.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{`{"a": [1, 2.5, "x", null, true, {}]}`, `"<&>"`, `[1e308, -0, 0.000001]`, `{"` + strings.Repeat("k", 5000) + `": 1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if _, ok := v.(string); ok {
			return // a string is listed as it is, not as JSON
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := render(v, nil), inventory.BoundString(string(b)); got != want {
			t.Errorf("render = %q, encoding/json %q", got, want)
		}
	})
}

// A path down long keys is spelt as far as the string bound, as cutting the whole would.
func TestAPathDownLongKeysIsSpeltAsFarAsTheBound(t *testing.T) {
	key := strings.Repeat("K\u00e9\n", 1500)
	var at []seg
	for d := range 10 {
		at = append(at, seg{name: fmt.Sprint("f", d)}, seg{name: key + fmt.Sprint(d), key: true}, seg{index: d, isIdx: true})
		if got, want := pathText(at, nil, true), inventory.BoundString(pathText(at, nil, false)); got != want {
			t.Fatalf("depth %d: bounded %q…, cut %q…", d, got[:80], want[:80])
		}
	}
}

// FindsSubtree past its bound says yes: a whole parse, whose matching is bounded, is always
// a safe answer.
func TestFindsSubtreePastItsBoundSaysYes(t *testing.T) {
	set := mustSet(t, Spec{ID: "deep", Kinds: []string{"core/ConfigMap"}, Path: "data[*]", Values: true})
	if set.FindsSubtree(map[string]any{"data": wideData(1000)}, "", "ConfigMap") {
		t.Error("a map of strings within the bound: want no subtree found")
	}
	if !set.FindsSubtree(map[string]any{"data": wideData(100_000)}, "", "ConfigMap") {
		t.Error("a map of strings past the bound: want yes")
	}
}
