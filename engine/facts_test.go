package engine

import (
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// TestKubeVersionFactsFollowHelm pins the constraint cases users hit: "-0" admits vendor
// and pre-release builds, upper bounds exclude their own minor, garbage does not parse.
func TestKubeVersionFactsFollowHelm(t *testing.T) {
	tests := []struct {
		constraint, target, want string
	}{
		{">=1.21.0-0 <1.33.0-0", "1.33", KubeVersionExcludes},
		{">=1.21.0-0 <1.33.0-0", "1.32", KubeVersionAdmits},
		{">=1.21.0-0", "1.33", KubeVersionAdmits},
		{">=1.21.0-0 <1.30.0-0", "1.30", KubeVersionExcludes},
		{">= 1.19.0-0, < 1.31.0-0", "1.31", KubeVersionExcludes},
		{">=1.34.0-0", "1.33", KubeVersionExcludes},
		{"^1.20.0-0", "1.33", KubeVersionAdmits},
		{"~1.32.0", "1.33", KubeVersionExcludes},
		{">=1.21.0-0 <<1.30", "1.33", KubeVersionInvalid},
	}
	for _, tt := range tests {
		inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{{Name: "r", Namespace: "ns", Chart: "c", KubeVersion: tt.constraint}}}
		if got := kubeVersionFacts(inv, []string{tt.target})["ns/r"][tt.target]; got != tt.want {
			t.Errorf("kubeVersion %q at %s = %s, want %s", tt.constraint, tt.target, got, tt.want)
		}
	}
	inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{{Name: "r", Namespace: "ns", Chart: "c"}}}
	if facts := kubeVersionFacts(inv, []string{"1.33"}); len(facts) != 0 {
		t.Errorf("a release without kubeVersion got facts %v", facts)
	}
}
