package probe

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func decode(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

func mustSet(t *testing.T, specs ...Spec) *Set {
	t.Helper()
	declared := make([]Declared, len(specs))
	for i, s := range specs {
		declared[i] = Declared{ID: "kb/" + s.ID, Spec: s}
	}
	s, err := NewSet(declared)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// input is one object an observer looks at.
type input struct {
	group, kind string
	ref         inventory.ObjectRef
	obj         any
}

func in(t *testing.T, group, kind, name, text string) input {
	t.Helper()
	return input{group, kind, inventory.ObjectRef{Namespace: "ns", Name: name, File: "f.yaml", Line: 3}, decode(t, text)}
}

func observeAll(s *Set, objs []input) *Observer {
	o := s.NewObserver()
	for _, x := range objs {
		o.Observe(x.obj, x.group, x.kind, x.ref)
	}
	return o
}

func ref(group, kind, name string, values ...string) inventory.ProbeObject {
	return inventory.ProbeObject{Group: group, Kind: kind, Namespace: "ns", Name: name, File: "f.yaml", Line: 3, Values: values}
}

func TestAPresentProbeRecordsTheObjectsAndValuesItFinds(t *testing.T) {
	svc := func(name, spec string) string {
		return `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "` + name + `"}, "spec": ` + spec + `}`
	}
	long := strings.Repeat("x", inventory.MaxStringLength+10)
	tests := []struct {
		name string
		spec Spec
		objs func(t *testing.T) []input
		want inventory.Probe
	}{
		{
			name: "an object holding the field is counted and named with its group and kind",
			spec: Spec{ID: "lbip", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP"},
			objs: func(t *testing.T) []input {
				return []input{
					in(t, "", "Service", "a", svc("a", `{"loadBalancerIP": "10.0.0.1"}`)),
					in(t, "", "Service", "b", svc("b", `{"type": "ClusterIP"}`)),
				}
			},
			want: inventory.Probe{Examined: 2, Count: 1, Objects: []inventory.ProbeObject{ref("", "Service", "a")}},
		},
		{
			name: "values are kept per object once each and counted once per object that holds them",
			spec: Spec{ID: "ports", Kinds: []string{"core/Service"}, Path: "spec.ports[*].name", Values: true},
			objs: func(t *testing.T) []input {
				return []input{
					in(t, "", "Service", "a", svc("a", `{"ports": [{"name": "http"}, {"name": "tls"}, {"name": "http"}]}`)),
					in(t, "", "Service", "b", svc("b", `{"ports": [{"name": "http"}]}`)),
				}
			},
			want: inventory.Probe{Examined: 2, Count: 2,
				Objects: []inventory.ProbeObject{ref("", "Service", "a", "http", "tls"), ref("", "Service", "b", "http")},
				Values:  []inventory.ProbeValue{{Value: "http", Count: 2}, {Value: "tls", Count: 1}}},
		},
		{
			name: "numbers, booleans and objects are listed as their JSON text",
			spec: Spec{ID: "any", Kinds: []string{"core/Service"}, Path: "spec.x[*]", Values: true},
			objs: func(t *testing.T) []input {
				return []input{in(t, "", "Service", "a", svc("a", `{"x": [80, true, {"path": "/x"}, 1.5, "s"]}`))}
			},
			want: inventory.Probe{Examined: 1, Count: 1,
				Objects: []inventory.ProbeObject{ref("", "Service", "a", "80", "true", `{"path":"/x"}`, "1.5", "s")},
				Values: []inventory.ProbeValue{{Value: "1.5", Count: 1}, {Value: "80", Count: 1}, {Value: "s", Count: 1},
					{Value: "true", Count: 1}, {Value: `{"path":"/x"}`, Count: 1}}},
		},
		{
			name: "a string longer than the document's bound is cut to it",
			spec: Spec{ID: "long", Kinds: []string{"core/Service"}, Path: "spec.x", Values: true},
			objs: func(t *testing.T) []input {
				return []input{in(t, "", "Service", "a", svc("a", `{"x": "`+long+`"}`))}
			},
			want: inventory.Probe{Examined: 1, Count: 1,
				Objects: []inventory.ProbeObject{ref("", "Service", "a", long[:inventory.MaxStringLength])},
				Values:  []inventory.ProbeValue{{Value: long[:inventory.MaxStringLength], Count: 1}}},
		},
		{
			name: "an object lists at most MaxObjectValues values, the first found, and all are counted",
			spec: Spec{ID: "many", Kinds: []string{"core/Service"}, Path: "spec.x[*]", Values: true},
			objs: func(t *testing.T) []input {
				var xs []string
				for i := range inventory.MaxObjectValues + 2 {
					xs = append(xs, fmt.Sprintf("%q", fmt.Sprintf("v%02d", i)))
				}
				return []input{in(t, "", "Service", "a", svc("a", `{"x": [`+strings.Join(xs, ",")+`]}`))}
			},
			want: func() inventory.Probe {
				p := inventory.Probe{Examined: 1, Count: 1, Objects: []inventory.ProbeObject{ref("", "Service", "a")}}
				for i := range inventory.MaxObjectValues + 2 {
					v := fmt.Sprintf("v%02d", i)
					if i < inventory.MaxObjectValues {
						p.Objects[0].Values = append(p.Objects[0].Values, v)
					}
					p.Values = append(p.Values, inventory.ProbeValue{Value: v, Count: 1})
				}
				return p
			}(),
		},
		{
			name: "a probe of a kind looks at no other kind, nor at the same kind of another group",
			spec: Spec{ID: "deploy", Kinds: []string{"apps/Deployment"}, Path: "metadata.name"},
			objs: func(t *testing.T) []input {
				return []input{
					in(t, "apps", "Deployment", "a", `{"metadata": {"name": "a"}}`),
					in(t, "example.com", "Deployment", "b", `{"metadata": {"name": "b"}}`),
					in(t, "", "Service", "c", `{"metadata": {"name": "c"}}`),
				}
			},
			want: inventory.Probe{Examined: 1, Count: 1, Objects: []inventory.ProbeObject{ref("apps", "Deployment", "a")}},
		},
		{
			name: "a probe of a custom kind looks at that group's kind only",
			spec: Spec{ID: "crd", Kinds: []string{"example.com/Deployment"}, Path: "metadata.name"},
			objs: func(t *testing.T) []input {
				return []input{
					in(t, "apps", "Deployment", "a", `{"metadata": {"name": "a"}}`),
					in(t, "example.com", "Deployment", "b", `{"metadata": {"name": "b"}}`),
				}
			},
			want: inventory.Probe{Examined: 1, Count: 1, Objects: []inventory.ProbeObject{ref("example.com", "Deployment", "b")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, tt.spec)
			got := observeAll(s, tt.objs(t)).Probes()
			want := tt.want
			want.ID, want.Probe, want.Available = "kb/"+tt.spec.ID, Normal(tt.spec), true
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("observed\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestAnObservationListsTheFirstObjectsAndTheSmallestValues(t *testing.T) {
	s := mustSet(t, Spec{ID: "name", Kinds: []string{"core/ConfigMap"}, Path: "data[*]", Values: true})
	n := max(inventory.MaxObjectRefs, inventory.MaxProbeValues) + 20
	var objs []input
	for i := range n {
		// Every object holds one value of its own, found in descending order, and one all share.
		objs = append(objs, in(t, "", "ConfigMap", fmt.Sprint(i), fmt.Sprintf(`{"data": {"own": "v%04d", "shared": "all"}}`, n-i)))
	}
	p := observeAll(s, objs).Probes()[0]
	if p.Examined != n || p.Count != n {
		t.Errorf("examined %d, count %d; want %d, %d", p.Examined, p.Count, n, n)
	}
	if len(p.Objects) != inventory.MaxObjectRefs || p.ObjectsOmitted != n-inventory.MaxObjectRefs {
		t.Errorf("%d objects, %d omitted; want %d, %d", len(p.Objects), p.ObjectsOmitted, inventory.MaxObjectRefs, n-inventory.MaxObjectRefs)
	}
	if p.Objects[len(p.Objects)-1].Name != fmt.Sprint(inventory.MaxObjectRefs-1) {
		t.Errorf("last object listed is %s, want the first ones found", p.Objects[len(p.Objects)-1].Name)
	}
	if len(p.Values) != inventory.MaxProbeValues {
		t.Fatalf("%d values listed, want %d", len(p.Values), inventory.MaxProbeValues)
	}
	listed := 0
	for _, v := range p.Values {
		listed += v.Count
	}
	if listed+p.ValuesOmitted != 2*n {
		t.Errorf("%d occurrences listed and %d omitted, want %d in all", listed, p.ValuesOmitted, 2*n)
	}
	// The values listed are the smallest, whatever order they were found in: what merged
	// observers can agree on.
	if last := fmt.Sprintf("v%04d", inventory.MaxProbeValues-1); p.Values[len(p.Values)-1] != (inventory.ProbeValue{Value: last, Count: 1}) {
		t.Errorf("last value %+v, want %s", p.Values[len(p.Values)-1], last)
	}
	if p.Values[0] != (inventory.ProbeValue{Value: "all", Count: n}) {
		t.Errorf("first value %+v, want the shared one in all %d objects", p.Values[0], n)
	}
}

func TestAnAbsentProbeRecordsWhereThePathFallsShort(t *testing.T) {
	limits := Spec{ID: "limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: MatchAbsent, Values: true}
	deploy := func(podSpec string) string {
		return `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": ` + podSpec + `}}}`
	}
	tests := []struct {
		name, podSpec string
		want          []string // where it fell short; nil: not recorded
	}{
		{"a second container without limits", `{"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}, {"name": "b"}]}`,
			[]string{"spec.containers[1]"}},
		{"every container with limits", `{"containers": [{"resources": {"limits": {"cpu": "1"}}}]}`, nil},
		{"no containers field", `{}`, []string{"spec"}},
		{"an empty containers list", `{"containers": []}`, nil},
		{"containers set to null", `{"containers": null}`, []string{"spec"}},
		{"limits set to null", `{"containers": [{"resources": {"limits": null}}]}`, []string{"spec.containers[0].resources"}},
		{"resources set to null", `{"containers": [{"resources": null}]}`, []string{"spec.containers[0]"}},
		{"containers a scalar", `{"containers": "x"}`, []string{"spec.containers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, limits)
			p := observeAll(s, []input{in(t, "apps", "Deployment", "d", deploy(tt.podSpec))}).Probes()[0]
			if tt.want == nil {
				if p.Count != 0 || len(p.Objects) != 0 {
					t.Errorf("recorded %+v, want nothing", p.Objects)
				}
				return
			}
			if p.Count != 1 || len(p.Objects) != 1 || !reflect.DeepEqual(p.Objects[0].Values, tt.want) {
				t.Errorf("recorded %d: %+v, want the deployment with %q", p.Count, p.Objects, tt.want)
			}
		})
	}
}

func TestAPodTemplateProbeLooksAtEveryWorkloadsTemplate(t *testing.T) {
	s := mustSet(t, Spec{ID: "host", PodTemplate: true, Path: "spec.hostNetwork"})
	// The pod spec, nested where each kind keeps it; a decoy at the top of the object that a
	// probe applied to the object itself would find.
	podSpec := `{"hostNetwork": true}`
	var objs []input
	var want []inventory.ProbeObject
	for _, key := range TemplateKinds() {
		group, kind, _ := SplitKind(key)
		tp, _ := TemplatePath(group, kind)
		obj := `{"spec": ` + podSpec + `}`
		for i := len(tp) - 1; i >= 0; i-- {
			obj = `{"` + tp[i] + `": ` + obj + `}`
		}
		objs = append(objs, in(t, group, kind, key, obj))
		want = append(want, ref(group, kind, key))
		if len(tp) > 0 {
			// The same kind with the field at the top, not in its template, is not matched.
			objs = append(objs, in(t, group, kind, key+"-decoy", `{"spec": {"hostNetwork": true}, "x": {"spec": `+podSpec+`}}`))
		}
	}
	objs = append(objs, in(t, "", "ConfigMap", "cm", `{"spec": {"hostNetwork": true}}`),
		in(t, "example.com", "Deployment", "crd", `{"spec": {"template": {"spec": {"hostNetwork": true}}}}`))
	if len(TemplateKinds()) < 11 || !strings.Contains(strings.Join(TemplateKinds(), " "), "batch/CronJob") {
		t.Fatalf("TemplateKinds() = %v, want every workload kind", TemplateKinds())
	}
	p := observeAll(s, objs).Probes()[0]
	if !reflect.DeepEqual(p.Objects, want) {
		t.Errorf("matched\n%+v\nwant\n%+v", p.Objects, want)
	}
	if p.Examined != len(objs)-2 {
		t.Errorf("examined %d, want %d (every workload, no ConfigMap, no custom kind)", p.Examined, len(objs)-2)
	}
}

// objectsAtoZ are objects whose values cross every bound, found in an order that is not
// their sort order, so a merge that lists values in another order than observation shows.
func objectsAtoZ(t *testing.T) []input {
	var objs []input
	n := inventory.MaxObjectRefs + 30
	for i := range n {
		// Values appear in descending order, several per object, some shared.
		vals := []string{fmt.Sprintf(`"z%04d"`, n-i), fmt.Sprintf(`"y%04d"`, (n-i)/3), `"shared"`}
		text := fmt.Sprintf(`{"metadata": {"name": "o%d"}, "spec": {"ports": [%s], "x": %d}}`, i, strings.Join(vals, ","), i%7)
		objs = append(objs, in(t, "", "Service", fmt.Sprint(i), text))
		if i%5 == 0 {
			objs = append(objs, in(t, "apps", "Deployment", fmt.Sprint(i), `{"spec": {"template": {"spec": {}}}}`))
		}
	}
	return objs
}

func TestMergingObserversInOrderEqualsOneObserver(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "ports", Kinds: []string{"core/Service"}, Path: "spec.ports[*]", Values: true},
		Spec{ID: "x", Kinds: []string{"core/Service"}, Path: "spec.x", Values: true},
		Spec{ID: "names", Kinds: []string{"core/Service"}, Path: "metadata.name"},
		Spec{ID: "absent", PodTemplate: true, Path: "spec.containers[*].image", Match: MatchAbsent, Values: true},
	)
	objs := objectsAtoZ(t)
	want := observeAll(s, objs).Probes()
	for _, cuts := range [][]int{{0}, {1}, {len(objs) / 2}, {len(objs) - 1}, {len(objs)}, {10, 60, 100}, {3, 4, 90, 91, 150}} {
		t.Run(fmt.Sprint(cuts), func(t *testing.T) {
			merged := s.NewObserver()
			from := 0
			for _, c := range append(cuts, len(objs)) {
				merged.Merge(observeAll(s, objs[from:c]))
				from = c
			}
			got := merged.Probes()
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s merged:\n%+v\none observer:\n%+v", want[i].ID, summary(got[i]), summary(want[i]))
				}
			}
		})
	}
}

func summary(p inventory.Probe) string {
	return fmt.Sprintf("examined %d count %d objects %d omitted %d values %d (first %v) omitted %d",
		p.Examined, p.Count, len(p.Objects), p.ObjectsOmitted, len(p.Values), p.Values[:min(3, len(p.Values))], p.ValuesOmitted)
}

func TestUnavailableMarksTheProbesOfThatKindAndSurvivesMerge(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "svc", Kinds: []string{"core/Service"}, Path: "spec.type"},
		Spec{ID: "svc-or-ing", Kinds: []string{"networking.k8s.io/Ingress", "core/Service"}, Path: "spec"},
		Spec{ID: "template", PodTemplate: true, Path: "spec.hostNetwork"},
		Spec{ID: "sc", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "provisioner"},
	)
	tests := []struct {
		group, kind string
		want        []string // unavailable ids
	}{
		{"", "Service", []string{"kb/svc", "kb/svc-or-ing"}},
		{"networking.k8s.io", "Ingress", []string{"kb/svc-or-ing"}},
		{"batch", "CronJob", []string{"kb/template"}},
		{"", "Pod", []string{"kb/template"}},
		{"example.com", "Deployment", nil},
		{"", "ConfigMap", nil},
	}
	for _, tt := range tests {
		t.Run(tt.group+"/"+tt.kind, func(t *testing.T) {
			part := s.NewObserver()
			part.Unavailable(tt.group, tt.kind, "forbidden")
			part.Unavailable(tt.group, tt.kind, "later reason")
			o := s.NewObserver()
			o.Merge(part)
			o.Merge(s.NewObserver())
			var got []string
			for _, p := range o.Probes() {
				if !p.Available {
					got = append(got, p.ID)
					if p.Reason != "forbidden" {
						t.Errorf("%s: reason %q, want the first given", p.ID, p.Reason)
					}
				} else if p.Reason != "" {
					t.Errorf("%s available with reason %q", p.ID, p.Reason)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("unavailable %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProbesAreAnsweredInIDOrderWithDefaultsSpelledOut(t *testing.T) {
	s, err := NewSet([]Declared{
		{ID: "kb/b", Spec: Spec{ID: "b", Kinds: []string{"core/Service"}, Path: "spec"}},
		{ID: "custom/p/a", Spec: Spec{ID: "a", Kinds: []string{"core/Service"}, Path: "spec", Match: MatchAbsent}},
		{ID: "kb/a", Spec: Spec{ID: "a", PodTemplate: true, Path: "spec"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids, matches []string
	for _, p := range s.NewObserver().Probes() {
		ids, matches = append(ids, p.ID), append(matches, p.Probe.Match)
		if !p.Available || p.Reason != "" {
			t.Errorf("%s: available %v reason %q, want available", p.ID, p.Available, p.Reason)
		}
	}
	if want := []string{"custom/p/a", "kb/a", "kb/b"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if want := []string{MatchAbsent, MatchPresent, MatchPresent}; !reflect.DeepEqual(matches, want) {
		t.Errorf("matches %v, want %v", matches, want)
	}
}

func TestNewSetRefusesWhatCannotBeObserved(t *testing.T) {
	ok := Spec{ID: "p", Kinds: []string{"core/Service"}, Path: "spec"}
	with := func(f func(*Spec)) []Declared {
		s := ok
		f(&s)
		return []Declared{{ID: "kb/p", Spec: s}}
	}
	var tooMany []Declared
	for i := range inventory.MaxProbes + 1 {
		tooMany = append(tooMany, Declared{ID: fmt.Sprintf("kb/p%d", i), Spec: ok})
	}
	tests := []struct {
		name     string
		declared []Declared
		says     string
	}{
		{"the same id twice", []Declared{{ID: "kb/p", Spec: ok}, {ID: "kb/p", Spec: ok}}, "probe kb/p declared twice"},
		{"more than MaxProbes", tooMany, fmt.Sprintf("at most %d", inventory.MaxProbes)},
		{"an id with capitals", with(func(s *Spec) { s.ID = "Probe" }), `id "Probe"`},
		{"an empty id", with(func(s *Spec) { s.ID = "" }), `id ""`},
		{"an id ending in '-'", with(func(s *Spec) { s.ID = "p-" }), `id "p-"`},
		{"neither kinds nor podTemplate", with(func(s *Spec) { s.Kinds = nil }), "either kinds or podTemplate"},
		{"both kinds and podTemplate", with(func(s *Spec) { s.PodTemplate = true }), "either kinds or podTemplate"},
		{"a kind without a group", with(func(s *Spec) { s.Kinds = []string{"core/Service", "Service"} }), "kinds[1]"},
		{"a kind listed twice", with(func(s *Spec) { s.Kinds = []string{"core/Service", "apps/Deployment", "core/Service"} }), "kinds[2]: core/Service listed twice"},
		{"a Secret, whose values would leave the cluster", with(func(s *Spec) { s.Kinds = []string{"core/Secret"} }), "kinds[0]: probes may not read Secrets"},
		{"a kind with two slashes", with(func(s *Spec) { s.Kinds = []string{"a/b/C"} }), "kinds[0]"},
		{"a kind with an empty group", with(func(s *Spec) { s.Kinds = []string{"/Service"} }), "kinds[0]"},
		{"a bad path", with(func(s *Spec) { s.Path = "spec..x" }), "offset 5"},
		{"an empty path", with(func(s *Spec) { s.Path = "" }), "want a field name"},
		{"an unknown match", with(func(s *Spec) { s.Match = "exists" }), `match "exists"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSet(tt.declared)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("NewSet = %v, %v; want an error saying %q", s, err, tt.says)
			}
		})
	}
	if _, err := NewSet(tooMany[:inventory.MaxProbes]); err != nil {
		t.Errorf("exactly MaxProbes refused: %v", err)
	}
}

func TestFindsSubtreeSaysWhenAKeptValueIsAMapOrAList(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "containers", PodTemplate: true, Path: "spec.containers[*]", Values: true},
		Spec{ID: "images", PodTemplate: true, Path: "spec.containers[*].image", Values: true},
		Spec{ID: "spec", Kinds: []string{"core/Service"}, Path: "spec", Values: true},
		Spec{ID: "absent", Kinds: []string{"core/ConfigMap"}, Path: "data", Match: MatchAbsent, Values: true},
		Spec{ID: "count", Kinds: []string{"core/Endpoints"}, Path: "data"},
	)
	deploy := decode(t, `{"spec": {"template": {"spec": {"containers": [{"image": "a"}]}}}}`)
	tests := []struct {
		name        string
		group, kind string
		obj         any
		keeps, want bool
	}{
		{"a container, found whole in a template", "apps", "Deployment", deploy, true, true},
		{"a container list that is empty", "apps", "Deployment", decode(t, `{"spec": {"template": {"spec": {"containers": []}}}}`), true, false},
		{"a map at the end of a path", "", "Service", decode(t, `{"spec": {"type": "ClusterIP"}}`), true, true},
		{"a scalar at the end of a path", "", "Service", decode(t, `{"spec": "x"}`), true, false},
		{"an absent probe keeps where it fell short, not a value", "", "ConfigMap", decode(t, `{"data": {"a": "b"}}`), false, false},
		{"a probe keeping no values", "", "Endpoints", decode(t, `{"data": {"a": "b"}}`), false, false},
		{"a kind no probe looks at", "", "Namespace", deploy, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.KeepsValues(tt.group, tt.kind); got != tt.keeps {
				t.Errorf("KeepsValues = %v, want %v", got, tt.keeps)
			}
			if got := s.FindsSubtree(tt.obj, tt.group, tt.kind); got != tt.want {
				t.Errorf("FindsSubtree = %v, want %v", got, tt.want)
			}
		})
	}
	if (*Set)(nil).KeepsValues("", "Pod") || (*Set)(nil).FindsSubtree(deploy, "", "Pod") {
		t.Error("a nil set keeps values")
	}
}

func TestValueFiltersMatchOnlyTheValuesAProbeIsAbout(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "socket", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true, Equals: []string{"/var/run/docker.sock"}, Prefixes: []string{"/run/docker"}},
		Spec{ID: "master", PodTemplate: true, Path: "spec.tolerations[*].key", Values: true,
			Equals: []string{"node-role.kubernetes.io/master"}, Unless: []string{"node-role.kubernetes.io/control-plane"}},
	)
	o := s.NewObserver()
	pod := func(name string, paths, keys []string) {
		var vols, tols []any
		for _, p := range paths {
			vols = append(vols, map[string]any{"hostPath": map[string]any{"path": p}})
		}
		for _, k := range keys {
			tols = append(tols, map[string]any{"key": k})
		}
		o.Observe(map[string]any{"spec": map[string]any{"volumes": vols, "tolerations": tols}}, "", "Pod", inventory.ObjectRef{Name: name})
	}
	// The socket is the eleventh path: past the values one object lists, never past the filter.
	many := []string{"/a0", "/a1", "/a2", "/a3", "/a4", "/a5", "/a6", "/a7", "/a8", "/a9", "/var/run/docker.sock"}
	pod("eleven-paths", many, nil)
	pod("logs", []string{"/var/log"}, []string{"dedicated"})
	pod("prefixed", []string{"/run/docker-dind.sock"}, nil)
	pod("master-only", nil, []string{"node-role.kubernetes.io/master"})
	pod("both", nil, []string{"node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"})
	got := map[string][]string{}
	for _, p := range o.Probes() {
		for _, obj := range p.Objects {
			got[p.ID] = append(got[p.ID], obj.Name+"="+strings.Join(obj.Values, ","))
		}
		if p.Count != len(p.Objects) || p.Examined != 5 {
			t.Errorf("%s: count %d, examined %d; want %d and 5", p.ID, p.Count, p.Examined, len(p.Objects))
		}
	}
	want := map[string][]string{
		"kb/socket": {"eleven-paths=/var/run/docker.sock", "prefixed=/run/docker-dind.sock"},
		"kb/master": {"master-only=node-role.kubernetes.io/master"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("matched %v, want %v", got, want)
	}
}
