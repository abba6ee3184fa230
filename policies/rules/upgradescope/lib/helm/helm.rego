# METADATA
# title: Helm releases by index
# description: |
#   The release at an index of input.inventory.helmReleases, read from
#   input.facts.helmReleases, where the engine converts only the releases a built-in rule
#   may judge; any other index is read from the whole list, which converts every release on
#   first read. Rules that look releases up by index read them through release.
package upgradescope.lib.helm

# METADATA
# description: The Helm release at index i of input.inventory.helmReleases.
release(i) := r if {
	r := input.facts.helmReleases[i]
} else := input.inventory.helmReleases[i]
