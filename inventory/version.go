package inventory

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Version is a Kubernetes version as servers and vendors print it. Suffix keeps whatever
// followed the numbers (`-eks-4096722`, `+k3s1`, `-gke.1106000`).
type Version struct {
	Major, Minor, Patch int
	HasPatch            bool
	Suffix              string
}

// ParseVersion parses a Kubernetes version string: `1.36`, `v1.36.2` and vendor builds, a
// pre-release (`-…`) or build (`+…`) suffix of any shape (no line break) after the numbers,
// as EKS, GKE, AKS, k3s, RKE2 and OpenShift print them. It reads the string by hand rather
// than with a regular expression: the fleet server parses versions several times per cluster
// on every read. versionRE in the tests is the reference a differential fuzz target holds it to.
func ParseVersion(s string) (Version, error) {
	var v Version
	rest, _ := strings.CutPrefix(s, "v")
	major, rest, ok := cutDigits(rest)
	if !ok || !strings.HasPrefix(rest, ".") {
		return Version{}, invalidVersion(s)
	}
	minor, rest, ok := cutDigits(rest[1:])
	if !ok {
		return Version{}, invalidVersion(s)
	}
	var patch string
	if strings.HasPrefix(rest, ".") {
		if patch, rest, ok = cutDigits(rest[1:]); !ok {
			return Version{}, invalidVersion(s)
		}
		v.HasPatch = true
	}
	if rest != "" && (rest[0] != '-' && rest[0] != '+' || strings.ContainsRune(rest, '\n')) {
		return Version{}, invalidVersion(s)
	}
	v.Suffix = rest
	var err error
	if v.Major, err = atoi(major); err != nil {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
	}
	if v.Minor, err = atoi(minor); err != nil {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
	}
	if v.HasPatch {
		if v.Patch, err = atoi(patch); err != nil {
			return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
		}
	}
	return v, nil
}

// cutDigits splits the leading ASCII digits (at least one) off s.
func cutDigits(s string) (digits, rest string, ok bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:], i > 0
}

func invalidVersion(s string) error {
	return fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR[.PATCH], optionally with a leading v and a vendor suffix", s)
}

func atoi(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<20 {
		return 0, fmt.Errorf("component %q out of range", s)
	}
	return n, nil
}

// MinorString is the `MAJOR.MINOR` form reports and rules use.
func (v Version) MinorString() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// NextMinor is the minor after v's: what a cluster at v is judged at by default.
func (v Version) NextMinor() string { return Version{Major: v.Major, Minor: v.Minor + 1}.MinorString() }

// LaterMinor answers whether v is a later minor than o (patches aside): a target that is not
// later than the minor a cluster runs is already reached and says nothing about upgrading.
func (v Version) LaterMinor(o Version) bool {
	return v.Major > o.Major || v.Major == o.Major && v.Minor > o.Minor
}

// DefaultTarget is the minor a cluster at version is judged at when no target is named: the
// one after it (NextMinor). It is "" when version does not parse: a cluster whose version is
// unknown has no default target. Pass Document.JudgedVersion for a document's cluster.
func DefaultTarget(version string) string {
	v, err := ParseVersion(version)
	if err != nil {
		return ""
	}
	return v.NextMinor()
}

// PlanTargets is what a cluster at version is judged at when extra minors are planned as
// well: its DefaultTarget and every extra minor after version, sorted, once. An extra minor
// the cluster already runs or has passed says nothing about upgrading and is left out; when
// version does not parse, every extra minor is kept.
func PlanTargets(version string, extra []string) []string {
	var targets []string
	if next := DefaultTarget(version); next != "" {
		targets = append(targets, next)
	}
	v, vErr := ParseVersion(version)
	for _, t := range extra {
		tv, err := ParseVersion(t)
		if err == nil && vErr == nil && !tv.LaterMinor(v) {
			continue
		}
		targets = append(targets, t)
	}
	return SortMinors(targets)
}

// JudgedVersion is the version a document's cluster is judged from: its emulated minor when
// it has one (it behaves as that minor), else its server version; "" for neither.
func (d *Document) JudgedVersion() string {
	if d.EmulatedVersion != "" {
		return d.EmulatedVersion
	}
	return d.ServerVersion
}

// SortMinors sorts minors ("1.9", "1.10") numerically, without repeats; one that does not
// parse sorts as 0.0.
func SortMinors(minors []string) []string {
	slices.SortFunc(minors, func(a, b string) int {
		va, _ := ParseVersion(a)
		vb, _ := ParseVersion(b)
		if va.Major != vb.Major {
			return va.Major - vb.Major
		}
		return va.Minor - vb.Minor
	})
	return slices.Compact(minors)
}

// MinorsAfter lists the minors after v up to and including end ("1.31", "1.32", …): the hops
// of an upgrade plan. It is empty when end is not after v within the same major.
func (v Version) MinorsAfter(end Version) []string {
	if end.Major != v.Major {
		return nil
	}
	var out []string
	for m := v.Minor + 1; m <= end.Minor; m++ {
		out = append(out, Version{Major: v.Major, Minor: m}.MinorString())
	}
	return out
}

// ParseTarget parses an upgrade target: a version whose patch is validated and dropped. Vendor
// suffixes are refused, since a target names a Kubernetes minor, not a build.
func ParseTarget(s string) (string, error) {
	v, err := ParseVersion(s)
	if err != nil {
		return "", err
	}
	if v.Suffix != "" {
		return "", fmt.Errorf("invalid target %q: a target is a Kubernetes minor such as 1.37", s)
	}
	if v.Major != 1 {
		return "", fmt.Errorf("invalid target %q: only Kubernetes 1.x is known", s)
	}
	return v.MinorString(), nil
}
