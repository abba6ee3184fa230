package probe

import (
	"bytes"
	"slices"
)

// Screen marks, by probe index, the probes of one object's kind its text could satisfy; nil
// marks every probe. See Set.Screen.
type Screen []bool

// Screen answers which probes looking at objects of this group and kind could match an
// object written as text (its YAML or JSON document), and whether any could. A present-mode
// probe finds a value only where the object spells every field and key its path names, and
// YAML and JSON spell a key as its characters, whether plain, quoted, in a flow collection or
// behind an alias (an anchor is in the same document): a text that never contains one of
// them cannot hold the path, and the object need not be parsed for that probe. A backslash
// may spell a key through an escape, and a NUL byte is a sign of UTF-16, which the YAML
// decoder reads, so such a text screens nothing out; absent-mode probes
// need the object whatever its text.
func (s *Set) Screen(group, kind string, text []byte) (Screen, bool) {
	if s == nil {
		return nil, false
	}
	probes := s.byKind[KindKey(group, kind)]
	_, workload := TemplatePath(group, kind)
	if len(probes) == 0 && (!workload || len(s.template) == 0) {
		return nil, false
	}
	if bytes.IndexByte(text, '\\') >= 0 || bytes.IndexByte(text, 0) >= 0 {
		return nil, true // an escape, or UTF-16, may spell a name in other bytes
	}
	sc := make(Screen, len(s.probes))
	seen := make([]int8, len(s.needles)) // 0 unknown, 1 spelled, -1 not
	spelled := func(n int) bool {
		if seen[n] == 0 {
			seen[n] = -1
			if bytes.Contains(text, s.needles[n]) {
				seen[n] = 1
			}
		}
		return seen[n] > 0
	}
	anyLive := false
	mark := func(i int) {
		p := s.probes[i]
		live := true
		for _, n := range p.needles {
			if live = spelled(n); !live {
				break
			}
		}
		sc[i] = live
		anyLive = anyLive || live
	}
	for _, i := range probes {
		mark(i)
	}
	if workload {
		for _, i := range s.template {
			mark(i)
		}
	}
	return sc, anyLive
}

// needlesOf are the names a present-mode path spells, the last first: the leaf names are the
// rarest, so a text that lacks one is told soonest. An absent-mode probe has none.
func (s *Set) needlesOf(p compiled, index map[string]int) []int {
	if p.spec.Match == MatchAbsent {
		return nil
	}
	var out []int
	for i := len(p.path.steps) - 1; i >= 0; i-- {
		st := p.path.steps[i]
		if st.all {
			continue
		}
		n, ok := index[st.field]
		if !ok {
			n = len(s.needles)
			index[st.field] = n
			s.needles = append(s.needles, []byte(st.field))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Skip counts an object of this group and kind as examined by every probe looking at it,
// without looking: its text screened every probe out (Set.Screen), so none matches it.
func (o *Observer) Skip(group, kind string) {
	o.ObserveScreened(nil, group, kind, refNone, Screen{})
}
