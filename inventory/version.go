package inventory

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// Version is a Kubernetes version as servers and vendors print it. Suffix keeps whatever
// followed the numbers (`-eks-4096722`, `+k3s1`, `-gke.1106000`).
type Version struct {
	Major, Minor, Patch int
	HasPatch            bool
	Suffix              string
}

// versionRE accepts `1.36`, `v1.36.2` and vendor builds: a pre-release (`-…`) or build (`+…`)
// suffix of any shape after the numbers, as EKS, GKE, AKS, k3s, RKE2 and OpenShift print them.
var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?([-+].*)?$`)

// ParseVersion parses a Kubernetes version string.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR[.PATCH], optionally with a leading v and a vendor suffix", s)
	}
	var v Version
	var err error
	if v.Major, err = atoi(m[1]); err != nil {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
	}
	if v.Minor, err = atoi(m[2]); err != nil {
		return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
	}
	if m[3] != "" {
		if v.Patch, err = atoi(m[3]); err != nil {
			return Version{}, fmt.Errorf("invalid Kubernetes version %q: %w", s, err)
		}
		v.HasPatch = true
	}
	v.Suffix = m[4]
	return v, nil
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
