package probe

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// Declared is a probe the loaded bundles declared, with its qualified id ("kb/<id>",
// "custom/<pack>/<id>").
type Declared struct {
	ID   string
	Spec Spec
}

// Set is the union of the declared probes, compiled, with an index from each kind to the
// probes that look at it: objects of a kind no probe names cost one map lookup.
type Set struct {
	probes   []compiled
	needles  [][]byte         // the names paths spell, for Screen
	byKind   map[string][]int // "<group>/<Kind>" → probes naming it
	template []int            // probes of the pod template
}

type compiled struct {
	id      string
	spec    Spec
	path    Path
	needles []int // indices in Set.needles
}

// NewSet compiles the declared probes; an invalid one is refused with its id.
func NewSet(declared []Declared) (*Set, error) {
	if len(declared) > inventory.MaxProbes {
		return nil, fmt.Errorf("%d probes declared; an inventory observes at most %d", len(declared), inventory.MaxProbes)
	}
	s := &Set{byKind: map[string][]int{}}
	needles := map[string]int{}
	sorted := slices.SortedFunc(slices.Values(declared), func(a, b Declared) int { return cmp.Compare(a.ID, b.ID) })
	for i, d := range sorted {
		if i > 0 && sorted[i-1].ID == d.ID {
			return nil, fmt.Errorf("probe %s declared twice", d.ID)
		}
		if err := Validate(d.Spec); err != nil {
			return nil, fmt.Errorf("probe %s: %w", d.ID, err)
		}
		spec := Normal(d.Spec)
		spec.Kinds = slices.Clone(spec.Kinds)
		c := compiled{id: d.ID, spec: spec, path: MustParsePath(spec.Path)}
		c.needles = s.needlesOf(c, needles)
		s.probes = append(s.probes, c)
		if spec.PodTemplate {
			s.template = append(s.template, i)
		}
		for _, k := range spec.Kinds {
			group, kind, _ := SplitKind(k)
			key := KindKey(group, kind)
			s.byKind[key] = append(s.byKind[key], i)
		}
	}
	return s, nil
}

// Len is the number of probes.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.probes)
}

// Declared answers the probes of the set, in id order, defaults spelled out.
func (s *Set) Declared() []Declared {
	if s == nil {
		return nil
	}
	out := make([]Declared, len(s.probes))
	for i, p := range s.probes {
		out[i] = Declared{ID: p.id, Spec: p.spec}
	}
	return out
}

// Wants says whether some probe looks at objects of this group and kind.
func (s *Set) Wants(group, kind string) bool {
	if s == nil {
		return false
	}
	if len(s.byKind[KindKey(group, kind)]) > 0 {
		return true
	}
	_, workload := TemplatePath(group, kind)
	return workload && len(s.template) > 0
}

// Kinds answers every "<group>/<Kind>" some probe looks at, sorted: the kinds a live
// collector lists.
func (s *Set) Kinds() []string {
	if s == nil {
		return nil
	}
	kinds := map[string]bool{}
	for k := range s.byKind {
		kinds[k] = true
	}
	if len(s.template) > 0 {
		for _, k := range TemplateKinds() {
			kinds[k] = true
		}
	}
	return slices.Sorted(maps.Keys(kinds))
}

// Fields answers every field name and map key the probes looking at this kind step through,
// the pod template's own path included: what a reader that drops parts of an object to save
// work must keep. wildcards is true when some path steps into every value of something.
func (s *Set) Fields(group, kind string) (fields map[string]bool, wildcards []string) {
	fields = map[string]bool{}
	add := func(p compiled) {
		for i, st := range p.path.steps {
			switch {
			case st.all && i > 0, st.prefix && plainName(st.field) && i > 0:
				// A prefix spelt like a field name may match a key a narrowing drops.
				wildcards = append(wildcards, p.path.steps[i-1].field)
			case !st.all && !st.prefix:
				fields[st.field] = true
			}
		}
	}
	for _, i := range s.byKind[KindKey(group, kind)] {
		add(s.probes[i])
	}
	if tp, workload := TemplatePath(group, kind); workload && len(s.template) > 0 {
		for _, f := range tp {
			fields[f] = true
		}
		for _, i := range s.template {
			add(s.probes[i])
		}
	}
	return fields, wildcards
}

// plainName says whether s could be the start of a plain field name.
func plainName(s string) bool { return fieldName(s) == s }

// Observer gathers what the probes find in the objects of one walk. It is not safe for
// concurrent use: give each worker its own and Merge them in a fixed order.
type Observer struct {
	set *Set
	obs []observation
}

type observation struct {
	examined, count int
	objects         []inventory.ProbeObject
	objectsOmitted  int
	// values holds the MaxProbeValues smallest distinct values found, with the objects
	// holding each; occurrences counts every (object, value) pair, listed or not. Keeping
	// the smallest rather than the first found makes the listing independent of the order
	// objects are observed in, so observers merge to what one observer would have seen.
	values      map[string]int
	largest     string // the largest key of values, once it is full
	occurrences int
	unavailable string
}

// NewObserver starts an observation of every probe of the set.
func (s *Set) NewObserver() *Observer {
	o := &Observer{set: s}
	if s != nil {
		o.obs = make([]observation, len(s.probes))
	}
	return o
}

// Observe looks at one object, decoded from JSON or YAML (maps with string keys, lists,
// scalars), of the given group and kind, known to the document as ref.
func (o *Observer) Observe(obj any, group, kind string, ref inventory.ObjectRef) {
	o.ObserveScreened(obj, group, kind, ref, nil)
}

// refNone is the reference of an object no probe looks at.
var refNone inventory.ObjectRef

// ObserveScreened is Observe for the probes sc leaves (nil: all of them); the others count
// the object as examined and found nothing in it, as its text says.
func (o *Observer) ObserveScreened(obj any, group, kind string, ref inventory.ObjectRef, sc Screen) {
	if o.set == nil {
		return
	}
	for _, i := range o.set.byKind[KindKey(group, kind)] {
		o.observeScreened(i, obj, group, kind, ref, sc)
	}
	if len(o.set.template) == 0 {
		return
	}
	tp, workload := TemplatePath(group, kind)
	if !workload {
		return
	}
	template := templateOf(obj, tp)
	for _, i := range o.set.template {
		o.observeScreened(i, template, group, kind, ref, sc)
	}
}

func (o *Observer) observeScreened(i int, obj any, group, kind string, ref inventory.ObjectRef, sc Screen) {
	if sc != nil && (i >= len(sc) || !sc[i]) {
		o.obs[i].examined++
		return
	}
	o.observe(i, obj, group, kind, ref)
}

// templateOf follows the fields tp leads through to a workload's pod template.
func templateOf(obj any, tp []string) any {
	for _, f := range tp {
		m, _ := obj.(map[string]any)
		obj = m[f]
	}
	return obj
}

// KeepsValues says whether some probe looking at objects of this group and kind keeps the
// values it finds.
func (s *Set) KeepsValues(group, kind string) bool {
	found := false
	s.keepingValues(group, kind, func(compiled, bool) { found = true })
	return found
}

// FindsSubtree says whether a probe keeping the values of objects of this group and kind
// finds a map or a list in obj: a value listed as its JSON text whole, which a reader that
// dropped parts of the object to save work (see Fields) would list short.
func (s *Set) FindsSubtree(obj any, group, kind string) bool {
	var template any
	tp, _ := TemplatePath(group, kind)
	found := false
	s.keepingValues(group, kind, func(p compiled, inTemplate bool) {
		in := obj
		if inTemplate {
			if template == nil {
				template = templateOf(obj, tp)
			}
			in = template
		}
		for _, m := range p.path.Find(in) {
			switch m.Value.(type) {
			case map[string]any, []any:
				found = true
			}
		}
	})
	return found
}

// keepingValues calls f with every present-mode probe of this group and kind that keeps
// values, and whether it looks at the pod template.
func (s *Set) keepingValues(group, kind string, f func(p compiled, inTemplate bool)) {
	if s == nil {
		return
	}
	keeps := func(p compiled) bool { return p.spec.Values && p.spec.Match == MatchPresent }
	for _, i := range s.byKind[KindKey(group, kind)] {
		if keeps(s.probes[i]) {
			f(s.probes[i], false)
		}
	}
	if _, workload := TemplatePath(group, kind); workload {
		for _, i := range s.template {
			if keeps(s.probes[i]) {
				f(s.probes[i], true)
			}
		}
	}
}

func (o *Observer) observe(i int, obj any, group, kind string, ref inventory.ObjectRef) {
	p, ob := o.set.probes[i], &o.obs[i]
	ob.examined++
	var found []string
	if p.spec.Match == MatchAbsent {
		found = p.path.Missing(obj)
	} else {
		for _, m := range p.path.Find(obj) {
			found = append(found, render(m.Value))
		}
		found = p.filter(found)
	}
	if len(found) == 0 {
		return
	}
	ob.count++
	var kept []string
	if p.spec.Values {
		kept = distinct(found)
		if ob.values == nil {
			ob.values = map[string]int{}
		}
		for _, v := range kept {
			ob.addValue(v, 1)
		}
		ob.occurrences += len(kept)
		kept = kept[:min(len(kept), inventory.MaxObjectValues)]
	}
	if len(ob.objects) == inventory.MaxObjectRefs {
		ob.objectsOmitted++
		return
	}
	ob.objects = append(ob.objects, inventory.ProbeObject{
		Group: inventory.BoundString(group), Kind: inventory.BoundString(kind),
		Namespace: inventory.BoundString(ref.Namespace), Name: inventory.BoundString(ref.Name),
		File: inventory.BoundString(ref.File), Line: ref.Line, RenderedFrom: inventory.BoundString(ref.RenderedFrom),
		Values: kept, Ignore: boundedIgnore(ref.Ignore),
	})
}

func boundedIgnore(a *inventory.IgnoreAnnotation) *inventory.IgnoreAnnotation {
	if a == nil {
		return nil
	}
	return &inventory.IgnoreAnnotation{Rules: inventory.BoundString(a.Rules), Reason: inventory.BoundString(a.Reason)}
}

// filter keeps the values a present-mode probe is about (Equals, Prefixes); none when the
// object holds a value of Unless.
func (p compiled) filter(found []string) []string {
	s := p.spec
	if len(s.Equals)+len(s.Prefixes)+len(s.Unless) == 0 {
		return found
	}
	for _, v := range found {
		if slices.Contains(s.Unless, v) {
			return nil
		}
	}
	if len(s.Equals)+len(s.Prefixes) == 0 {
		return found
	}
	kept := found[:0]
	for _, v := range found {
		if slices.Contains(s.Equals, v) || slices.ContainsFunc(s.Prefixes, func(pre string) bool { return strings.HasPrefix(v, pre) }) {
			kept = append(kept, v)
		}
	}
	return kept
}

// addValue counts n objects holding v, keeping the MaxProbeValues smallest values: a value
// past them is evicted for good, since as many smaller ones have been found.
func (ob *observation) addValue(v string, n int) {
	if _, ok := ob.values[v]; ok {
		ob.values[v] += n
		return
	}
	full := len(ob.values) == inventory.MaxProbeValues
	if full && v > ob.largest {
		return
	}
	if full {
		delete(ob.values, ob.largest)
	}
	ob.values[v] = n
	if len(ob.values) == inventory.MaxProbeValues {
		ob.largest = ""
		for k := range ob.values {
			ob.largest = max(ob.largest, k)
		}
	}
}

// render is a found value as an observation lists it: a string as it is, anything else as
// its JSON text (80, true, {"path":"/x"}), cut to the document's string bound.
func render(v any) string {
	if s, ok := v.(string); ok {
		return inventory.BoundString(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return inventory.BoundString(fmt.Sprint(v))
	}
	return inventory.BoundString(string(b))
}

// distinct keeps the first of each value, in the order found.
func distinct(vs []string) []string {
	seen := make(map[string]bool, len(vs))
	out := vs[:0:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Merge adds what another observer of the same set saw, as if its objects had been observed
// after o's own.
func (o *Observer) Merge(other *Observer) {
	for i := range o.obs {
		ob, b := &o.obs[i], &other.obs[i]
		ob.examined += b.examined
		ob.count += b.count
		kept := min(len(b.objects), inventory.MaxObjectRefs-len(ob.objects))
		ob.objects = append(ob.objects, b.objects[:kept]...)
		ob.objectsOmitted += b.objectsOmitted + len(b.objects) - kept
		if len(b.values) > 0 && ob.values == nil {
			ob.values = map[string]int{}
		}
		for v, n := range b.values {
			ob.addValue(v, n)
		}
		ob.occurrences += b.occurrences
		if ob.unavailable == "" {
			ob.unavailable = b.unavailable
		}
	}
}

// Unavailable marks every probe that looks at objects of this group and kind as not
// observed, for reason (the list was forbidden, timed out): a rule that reads it must not
// take what was seen for all there is.
func (o *Observer) Unavailable(group, kind, reason string) {
	if o.set == nil {
		return
	}
	mark := func(i int) {
		if o.obs[i].unavailable == "" {
			o.obs[i].unavailable = reason
		}
	}
	for _, i := range o.set.byKind[KindKey(group, kind)] {
		mark(i)
	}
	if _, workload := TemplatePath(group, kind); workload {
		for _, i := range o.set.template {
			mark(i)
		}
	}
}

// Probes answers the observations, one per probe in id order.
func (o *Observer) Probes() []inventory.Probe {
	if o.set == nil {
		return nil
	}
	out := make([]inventory.Probe, len(o.obs))
	for i, ob := range o.obs {
		p := o.set.probes[i]
		out[i] = inventory.Probe{
			ID: p.id, Probe: p.spec, Available: ob.unavailable == "", Reason: inventory.BoundString(ob.unavailable),
			Examined: ob.examined, Count: ob.count, Objects: ob.objects, ObjectsOmitted: ob.objectsOmitted,
		}
		listed := 0
		for _, v := range slices.Sorted(maps.Keys(ob.values)) {
			out[i].Values = append(out[i].Values, inventory.ProbeValue{Value: v, Count: ob.values[v]})
			listed += ob.values[v]
		}
		out[i].ValuesOmitted = ob.occurrences - listed
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
