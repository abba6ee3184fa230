package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// versionRE is the grammar ParseVersion reads by hand, kept as the reference it is fuzzed
// against: a leading v, MAJOR.MINOR, an optional .PATCH, and a suffix starting - or +.
var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?([-+].*)?$`)

// parseVersionRE is ParseVersion as it was written with versionRE.
func parseVersionRE(s string) (Version, error) {
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

// FuzzParseVersionMatchesTheRegexp holds the hand-written parser to the regular expression:
// the same Version, or the same error text.
func FuzzParseVersionMatchesTheRegexp(f *testing.F) {
	for _, s := range []string{"1.36", "v1.36.2", "v1.33.1-eks-4096722", "v1.31.5+k3s1", "1.36.", "1.36.x", "1.2.3.4",
		"v1.2-a\nb", "1.2+\r", "1.2-\xff", "vv1.2", "1.99999999", "01.002.0003", "1.2.3-", ".1.2", "1..2", "v", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := ParseVersion(s)
		want, wantErr := parseVersionRE(s)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("ParseVersion(%s) = %+v, %v; the regexp says %+v, %v", strconv.Quote(s), got, gotErr, want, wantErr)
		}
	})
}

func BenchmarkParseVersion(b *testing.B) {
	for range b.N {
		if _, err := ParseVersion("v1.33.1-eks-4096722"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseVersionRegexp(b *testing.B) {
	for range b.N {
		if _, err := parseVersionRE("v1.33.1-eks-4096722"); err != nil {
			b.Fatal(err)
		}
	}
}
