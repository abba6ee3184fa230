package probe

import (
	"cmp"
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
	filters int   // equals, prefixes and unless, in all
	longest int   // bytes of the longest of them: what comparing a value with one may read
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
		for _, f := range slices.Concat(spec.Equals, spec.Prefixes, spec.Unless) {
			c.filters, c.longest = c.filters+1, max(c.longest, len(f))
		}
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

// Observer gathers what the probes find in the objects of one walk, its matching counted
// against MaxProbeSteps and MaxCollectionSteps. It is not safe for concurrent use: give each
// worker its own, from Fork so that the bounds hold for the walk rather than per worker, and
// Merge them in a fixed order.
type Observer struct {
	set   *Set
	obs   []observation
	work  *work
	keys  keyOrder // of the object being observed
	meter meter    // of the probe matching it, kept to spare an allocation per match
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

// NewObserver starts an observation of every probe of the set, with bounds of its own.
func (s *Set) NewObserver() *Observer {
	o := &Observer{set: s}
	if s != nil {
		o.obs = make([]observation, len(s.probes))
		o.work = newWork(len(s.probes))
	}
	return o
}

// Fork starts an observation for another worker of o's walk: its matching counts against the
// same bounds as o's, so that the bounds hold for the walk however many workers share it.
// Merge it into o when it is done.
func (o *Observer) Fork() *Observer {
	f := o.set.NewObserver()
	f.work = o.work
	return f
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
	clear(o.keys)
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

// maxSubtreeSteps bounds one FindsSubtree: past it the answer is yes, which only costs the
// document a whole parse, whose matching is then bounded as any other.
const maxSubtreeSteps = 1 << 16

// FindsSubtree says whether a probe keeping the values of objects of this group and kind
// finds a map or a list in obj: a value listed as its JSON text whole, which a reader that
// dropped parts of the object to save work (see Fields) would list short. Past
// maxSubtreeSteps of matching it says yes.
func (s *Set) FindsSubtree(obj any, group, kind string) bool {
	var template any
	tp, _ := TemplatePath(group, kind)
	m := &meter{limit: maxSubtreeSteps}
	found := false
	s.keepingValues(group, kind, func(p compiled, inTemplate bool) {
		in := obj
		if inTemplate {
			if template == nil {
				template = templateOf(obj, tp)
			}
			in = template
		}
		p.path.walk(in, 0, nil, m, func(v any, _ []seg) {
			switch v.(type) {
			case map[string]any, []any:
				found = true
				m.stop()
			}
		})
	})
	m.flush()
	return found || m.over
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
	if o.work.reason(i) != "" {
		return // past a bound: the probe is not available, and what it found is dropped
	}
	if o.keys == nil {
		o.keys = keyOrder{}
	}
	m := &o.meter
	*m = meter{w: o.work, probe: i, keys: o.keys}
	found := p.find(obj, m)
	if m.flush(); m.over || len(found) == 0 {
		return
	}
	var kept []string
	if p.spec.Values {
		if kept = ob.keep(found, m); m.over {
			return
		}
	}
	ob.count++
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

// keep adds the distinct values one object holds to the observation's, charging m, and
// answers the first MaxObjectValues of them for the object's reference.
func (ob *observation) keep(found []string, m *meter) []string {
	kept := distinct(found, m)
	if ob.values == nil {
		ob.values = map[string]int{}
	}
	for _, v := range kept {
		if !m.charge(ob.addValue(v, 1)) {
			break
		}
	}
	m.flush()
	ob.occurrences += len(kept)
	return kept[:min(len(kept), inventory.MaxObjectValues)]
}

// find answers what the probe finds in obj, every step charged to m: for a present-mode probe
// the values it is about (filter), rendered; for an absent-mode one where the path falls
// short. Without values to keep, the first of them is answer enough.
func (p compiled) find(obj any, m *meter) []string {
	var found []string
	if p.spec.Match == MatchAbsent {
		if !p.spec.Values {
			p.path.missing(obj, 0, nil, m, func([]seg) { found = append(found, ""); m.stop() })
			return found
		}
		p.path.missing(obj, 0, []seg{}, m, func(at []seg) { found = append(found, pathText(at, m, true)) })
		return found
	}
	p.path.walk(obj, 0, nil, m, func(v any, _ []seg) {
		found = append(found, render(v, m))
		if !p.spec.Values && !p.narrowed() {
			m.stop()
		}
	})
	return p.filter(found, m)
}

func boundedIgnore(a *inventory.IgnoreAnnotation) *inventory.IgnoreAnnotation {
	if a == nil {
		return nil
	}
	return &inventory.IgnoreAnnotation{Rules: inventory.BoundString(a.Rules), Reason: inventory.BoundString(a.Reason)}
}

// narrowed says whether the probe keeps only some of the values its path reaches.
func (p compiled) narrowed() bool { return p.filters > 0 || p.spec.StrictInvalid != "" }

// filter keeps the values a present-mode probe is about (Equals, Prefixes, StrictInvalid);
// none when the object holds a value of Unless. Comparing each value with the filters is
// charged to m, and validating it as StrictInvalid asks as parsing it twice.
func (p compiled) filter(found []string, m *meter) []string {
	s := p.spec
	if !p.narrowed() {
		return found
	}
	for _, v := range found {
		if !m.charge(p.filters*(1+min(len(v), p.longest)/64)) || slices.Contains(s.Unless, v) {
			return nil
		}
	}
	if len(s.Equals)+len(s.Prefixes) == 0 && s.StrictInvalid == "" {
		return found
	}
	kept := found[:0]
	for _, v := range found {
		if len(s.Equals)+len(s.Prefixes) > 0 && !slices.Contains(s.Equals, v) &&
			!slices.ContainsFunc(s.Prefixes, func(pre string) bool { return strings.HasPrefix(v, pre) }) {
			continue
		}
		if s.StrictInvalid != "" && (!m.chargeBytes(2*len(v)) || !strictInvalid(s.StrictInvalid, v)) {
			continue
		}
		kept = append(kept, v)
	}
	return kept
}

// addValue counts n objects holding v, keeping the MaxProbeValues smallest values: a value
// past them is evicted for good, since as many smaller ones have been found.
// It answers its cost in steps: finding the new largest value reads every kept one.
func (ob *observation) addValue(v string, n int) (steps int) {
	if _, ok := ob.values[v]; ok {
		ob.values[v] += n
		return 1
	}
	full := len(ob.values) == inventory.MaxProbeValues
	if full && v > ob.largest {
		return 1
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
		return inventory.MaxProbeValues / 4
	}
	return 1
}

// distinct keeps the first of each value, in the order found, charging the hashing to m.
func distinct(vs []string, m *meter) []string {
	seen := make(map[string]bool, len(vs))
	out := vs[:0:0]
	for _, v := range vs {
		if !m.chargeBytes(len(v)) {
			return out
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Merge adds what another observer of the same set saw, as if its objects had been observed
// after o's own; the matching of an observer with bounds of its own (not a Fork of o) counts
// against o's bounds too.
func (o *Observer) Merge(other *Observer) {
	if o.work != nil && other.work != o.work {
		o.work.merge(other.work)
	}
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
		if reason := o.work.reason(i); reason != "" {
			// What it found before it stopped depends on the order objects came in: only
			// how many it examined is kept.
			out[i] = inventory.Probe{ID: p.id, Probe: p.spec, Reason: reason, Examined: ob.examined}
			continue
		}
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
