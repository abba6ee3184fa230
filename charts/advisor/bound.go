package advisor

import (
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// MaxAdviceValues bounds the JSON values the chartAdvice section may hold: a fifth of
// inventory.MaxValues, the whole document's budget, which a cluster's other sections need.
// A cluster of 200 blocked releases with a fix a few versions up holds about 10,000.
const MaxAdviceValues = inventory.MaxValues / 5

// MaxBlockKeys bounds the keys one version lists as blocking it at one target, as the
// schema does.
const MaxBlockKeys = 100

// Bound fits advice within the inventory's bounds: every string within
// inventory.MaxStringLength, at most MaxBlockKeys keys per version and target, and
// MaxAdviceValues values in all. Past the last, the APIs of versions no target admits go
// first (only the installed version's and the admitted ones' make a fix's API changes),
// then whole entries from the end, counted in omitted.
func Bound(advice []inventory.ChartAdvice) (kept []inventory.ChartAdvice, omitted int) {
	for i := range advice {
		boundStrings(&advice[i])
	}
	total := 0
	for _, a := range advice {
		total += adviceValues(a)
	}
	for i := range advice {
		if total <= MaxAdviceValues {
			break
		}
		before := adviceValues(advice[i])
		dropBlockedAPIs(&advice[i])
		total -= before - adviceValues(advice[i])
	}
	for total > MaxAdviceValues && len(advice) > 0 {
		total -= adviceValues(advice[len(advice)-1])
		advice = advice[:len(advice)-1]
		omitted++
	}
	return advice, omitted
}

func boundStrings(a *inventory.ChartAdvice) {
	b := inventory.BoundString
	a.Namespace, a.Name, a.Chart, a.Repository, a.Installed, a.Reason, a.Stopped = b(a.Namespace), b(a.Name), b(a.Chart), b(a.Repository), b(a.Installed), b(a.Reason), b(a.Stopped)
	if len(a.ValuesNotRead) > 16 {
		a.ValuesNotRead = a.ValuesNotRead[:16]
	}
	for i := range a.ValuesNotRead {
		a.ValuesNotRead[i] = b(a.ValuesNotRead[i])
	}
	for i := range a.Versions {
		v := &a.Versions[i]
		v.Version, v.AppVersion, v.KubeVersion, v.Error = b(v.Version), b(v.AppVersion), b(v.KubeVersion), b(v.Error)
		for j := range v.APIs {
			v.APIs[j] = b(v.APIs[j])
		}
		for t, keys := range v.Blocks {
			if len(keys) > MaxBlockKeys {
				keys = keys[:MaxBlockKeys]
			}
			for j := range keys {
				keys[j] = b(keys[j])
			}
			v.Blocks[t] = keys
		}
	}
}

// dropBlockedAPIs leaves out the APIs of every version but the installed one that no
// target admits, counting them in APIsOmitted.
func dropBlockedAPIs(a *inventory.ChartAdvice) {
	for i := 1; i < len(a.Versions); i++ {
		v := &a.Versions[i]
		if admitsSome(*v, a.Targets) {
			continue
		}
		v.APIsOmitted += len(v.APIs)
		v.APIs = nil
	}
}

func admitsSome(v inventory.ChartVersionJudged, targets []string) bool {
	return v.Error == "" && slices.ContainsFunc(targets, func(t string) bool { return len(v.Blocks[t]) == 0 })
}

// adviceValues counts the JSON values a marshals to, at most: one per object, array,
// string, number and boolean it may write.
func adviceValues(a inventory.ChartAdvice) int {
	n := 13 + len(a.Targets) + len(a.ValuesNotRead) // the object, its eleven fields, the targets array
	for _, v := range a.Versions {
		n += 8 + len(v.APIs) // the object, six fields, the apis array
		for _, keys := range v.Blocks {
			n += 1 + len(keys)
		}
	}
	return n
}
