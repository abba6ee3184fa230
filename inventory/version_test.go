package inventory

import (
	"slices"
	"strings"
	"testing"
)

func TestParseVersionAcceptsPlainAndVendorBuilds(t *testing.T) {
	tests := []struct {
		in     string
		minor  string
		patch  int
		suffix string
	}{
		{"1.36", "1.36", 0, ""},
		{"v1.36.2", "1.36", 2, ""},
		{"v1.33.1-eks-4096722", "1.33", 1, "-eks-4096722"},
		{"v1.32.4-gke.1106000", "1.32", 4, "-gke.1106000"},
		{"v1.31.5+k3s1", "1.31", 5, "+k3s1"},
		{"v1.30.2+rke2r1", "1.30", 2, "+rke2r1"},
		{"v1.29.10-aks.20240101", "1.29", 10, "-aks.20240101"},
		{"v1.28.6+f1618d5", "1.28", 6, "+f1618d5"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseVersion(tt.in)
			if err != nil {
				t.Fatalf("ParseVersion(%q): %v", tt.in, err)
			}
			if v.MinorString() != tt.minor || v.Patch != tt.patch || v.Suffix != tt.suffix {
				t.Errorf("ParseVersion(%q) = %+v, want minor %s patch %d suffix %q", tt.in, v, tt.minor, tt.patch, tt.suffix)
			}
		})
	}
}

func TestParseVersionRefusesWhatIsNotAVersion(t *testing.T) {
	for _, in := range []string{"", "1", "v1", "latest", "1.x", "-1.36", "+1.36", "1.36.", "1.36abc", " 1.36", "1.99999999"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) succeeded, want an error", in)
		}
	}
}

func TestParseTargetKeepsTheMinorAndRefusesBuilds(t *testing.T) {
	ok := map[string]string{"1.37": "1.37", "v1.37": "1.37", "1.37.2": "1.37", "v1.37.2": "1.37"}
	for in, want := range ok {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"v1.37.1-eks-1", "2.0", "1.37+k3s1", "next"} {
		if _, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q) succeeded, want an error", in)
		}
	}
}

func TestMinorsAfterListsEveryHopOfAPlan(t *testing.T) {
	tests := []struct {
		from, to string
		want     string
	}{
		{"1.30", "1.33", "1.31 1.32 1.33"},
		{"1.36", "1.37", "1.37"},
		{"1.37", "1.37", ""},
		{"1.37", "1.35", ""},
	}
	for _, tt := range tests {
		from, _ := ParseVersion(tt.from)
		to, _ := ParseVersion(tt.to)
		if got := strings.Join(from.MinorsAfter(to), " "); got != tt.want {
			t.Errorf("%s.MinorsAfter(%s) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestDefaultTargetIsTheNextMinor(t *testing.T) {
	tests := map[string]string{"v1.32.4-eks-1": "1.33", "1.36": "1.37", "v1.9.0": "1.10", "": "", "latest": ""}
	for version, want := range tests {
		if got := DefaultTarget(version); got != want {
			t.Errorf("DefaultTarget(%q) = %q, want %q", version, got, want)
		}
	}
}

func TestPlanTargetsAreTheNextMinorAndTheExtraOnesAfterTheCluster(t *testing.T) {
	tests := []struct {
		name  string
		doc   Document
		extra []string
		want  []string
	}{
		{"the next minor", Document{ServerVersion: "v1.32.4-eks-1"}, nil, []string{"1.33"}},
		{"extra minors after it, sorted, once", Document{ServerVersion: "v1.32.4"},
			[]string{"1.40", "1.31", "1.32", "1.33", "1.9"}, []string{"1.33", "1.40"}},
		{"the emulated minor counts", Document{ServerVersion: "v1.34.0", EmulatedVersion: "1.33"}, nil, []string{"1.34"}},
		{"no version: the extra ones only", Document{}, []string{"1.37"}, []string{"1.37"}},
		{"no version and no extra: nothing", Document{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PlanTargets(tt.doc.JudgedVersion(), tt.extra); !slices.Equal(got, tt.want) {
				t.Errorf("PlanTargets = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLaterMinorComparesMinorsAndIgnoresPatches(t *testing.T) {
	for _, c := range []struct {
		v, o string
		want bool
	}{
		{"1.37", "1.36", true},
		{"1.36", "1.36", false},
		{"1.36.9", "1.36.0", false},
		{"1.35", "1.36", false},
		{"1.10", "1.9", true},
		{"2.0", "1.99", true},
		{"1.99", "2.0", false},
	} {
		v, _ := ParseVersion(c.v)
		o, _ := ParseVersion(c.o)
		if got := v.LaterMinor(o); got != c.want {
			t.Errorf("%s.LaterMinor(%s) = %v, want %v", c.v, c.o, got, c.want)
		}
	}
}
