package gitops

import (
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upgradescope/upgradescope/inventory"
)

// versionKind says whether a version the author asked for is one version or a constraint.
// Masterminds/semver is what Helm and Flux read these with.
func versionKind(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v")); err == nil {
		return inventory.VersionExact
	}
	return inventory.VersionRange
}
