package advisor

import (
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/engine/facts"
	"github.com/upgradescope/upgradescope/inventory"
)

// search is one subject's advice as it is built: the versions judged so far and the
// candidates left.
type search struct {
	subject Subject
	ref     repo.Ref
	targets []string
	// advise says the subject gets an entry; done that its search is over.
	advise, done bool
	read         bool
	reasons      []string
	versions     []inventory.ChartVersionJudged
	candidates   []repo.Version
	omitted      int
	// independent are, by target, the blocker keys the subject's baseline raised: keys no
	// chart version can clear, left out of every version's Blocks.
	independent map[string][]string
}

func newSearch(s Subject, targets []string) *search {
	return &search{subject: s, targets: targets, ref: repo.Ref{Repository: s.Repository, Chart: s.Chart}}
}

func (s *search) less(o *search) bool {
	a, b := s.subject, o.subject
	if a.Source != b.Source {
		return a.Source < b.Source
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

func (s *search) gitops() bool { return s.subject.Source != inventory.ChartSourceHelm }

// stop ends the search, with a reason when one is given.
func (s *search) stop(reason string) {
	s.done = true
	if reason != "" {
		s.reasons = append(s.reasons, reason)
	}
}

// unfixed are the targets no judged version is free at yet, sorted.
func (s *search) unfixed() []string {
	var out []string
	for _, t := range s.targets {
		free := false
		for _, v := range s.versions {
			if v.Error == "" && len(v.Blocks[t]) == 0 {
				free = true
				break
			}
		}
		if !free {
			out = append(out, t)
		}
	}
	return out
}

// freeEverywhere says whether v was judged and no target blocks it.
func freeEverywhere(v inventory.ChartVersionJudged) bool { return v.Error == "" && len(v.Blocks) == 0 }

// setCandidates keeps the versions above the installed one a user on it may move to: no
// pre-release unless the installed version is one. offered is ascending, as the Repository
// contract says (charts/repo sorts once, by Helm's semver), so the order is trusted and not
// sorted a second time.
func (s *search) setCandidates(offered []repo.Version) {
	installed, err := semver.NewVersion(s.subject.Version)
	if err != nil {
		s.stop("the installed chart version " + quote(s.subject.Version) + " is not semver: later versions cannot be ordered after it")
		return
	}
	var out []repo.Version
	for _, v := range offered {
		sv, err := semver.NewVersion(v.Version)
		if err != nil || !sv.GreaterThan(installed) || sv.Prerelease() != "" && installed.Prerelease() == "" {
			continue
		}
		out = append(out, v)
	}
	s.candidates = out
}

// next takes the next candidate worth fetching (see worth). It ends the search when none is
// left or the bound is reached, counting the candidates not judged.
func (s *search) next(maxVersions int) (repo.Version, bool) {
	unfixed := s.unfixed()
	for len(s.candidates) > 0 {
		c := s.candidates[0]
		if !s.worth(c, unfixed) {
			s.candidates = s.candidates[1:]
			continue
		}
		if len(s.versions)-1 >= maxVersions {
			s.omitted = s.countAdmitting(unfixed)
			s.stop("")
			return repo.Version{}, false
		}
		s.candidates = s.candidates[1:]
		return c, true
	}
	s.stop("")
	return repo.Version{}, false
}

// worth says whether candidate c may still change the advice, as far as its kubeVersion (when
// the index says it) tells: a target its kubeVersion excludes is blocked there by the Helm
// rules. While some target has no free version yet, c is worth judging when it admits one of
// those (unfixed); once each target has its own lowest, only a version free at every target
// is still sought, so c must admit them all.
func (s *search) worth(c repo.Version, unfixed []string) bool {
	if len(unfixed) > 0 {
		return admitsAny(c, unfixed)
	}
	for _, t := range s.targets {
		if !admitsAny(c, []string{t}) {
			return false
		}
	}
	return true
}

func (s *search) countAdmitting(unfixed []string) int {
	n := 0
	for _, c := range s.candidates {
		if s.worth(c, unfixed) {
			n++
		}
	}
	return n
}

// admitsAny says whether v may be free at one of targets as far as its kubeVersion tells; a
// version whose metadata is not known yet, or whose constraint does not parse (the rules
// raise no blocker for it), may.
func admitsAny(v repo.Version, targets []string) bool {
	if !v.Known || v.KubeVersion == "" {
		return true
	}
	for _, t := range targets {
		ok, err := facts.AdmitsTarget(v.KubeVersion, t)
		if err != nil || ok {
			return true
		}
	}
	return false
}

// record adds a judged version, less the keys no version can clear (independent); the search
// ends at one free at every target.
func (s *search) record(v inventory.ChartVersionJudged) {
	v.Blocks = s.dependent(v.Blocks)
	s.versions = append(s.versions, v)
	if len(s.versions) > 1 && freeEverywhere(v) {
		s.stop("")
	}
}

// dependent is blocks less the independent keys, nil when nothing is left.
func (s *search) dependent(blocks map[string][]string) map[string][]string {
	var out map[string][]string
	for t, keys := range blocks {
		var kept []string
		for _, k := range keys {
			if !slices.Contains(s.independent[t], k) {
				kept = append(kept, k)
			}
		}
		if len(kept) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[t] = kept
		}
	}
	return out
}

// fixed says whether a version above the installed one is free at every target.
func (s *search) fixed() bool {
	for _, v := range s.versions[1:] {
		if freeEverywhere(v) {
			return true
		}
	}
	return false
}

func (s *search) advice() inventory.ChartAdvice {
	a := inventory.ChartAdvice{
		Source: s.subject.Source, Namespace: s.subject.Namespace, Name: s.subject.Name,
		Chart: s.subject.Chart, Repository: repo.Redact(s.ref.Repository), Installed: s.subject.Version,
		Read: s.read, Targets: s.targets, VersionsOmitted: s.omitted,
	}
	for _, v := range s.versions {
		v.APIs, v.APIsOmitted = boundAPIs(v.APIs)
		a.Versions = append(a.Versions, v)
	}
	a.ValuesNotRead = s.subject.ValuesNotRead
	a.Stopped = joinReasons(s.reasons)
	// Reason says it all in words; the engine reads the fields.
	var reasons []string
	for _, part := range a.ValuesNotRead {
		reasons = append(reasons, part+" not read")
	}
	reasons = append(reasons, s.reasons...)
	if s.read && len(s.versions) > 0 && len(s.versions[0].Blocks) > 0 && !s.fixed() {
		reasons = append(reasons, "no version read is free of blockers at every target")
	}
	a.Reason = joinReasons(reasons)
	return a
}

func quote(s string) string { return "\"" + s + "\"" }
