# METADATA
# title: Kubernetes version arithmetic
# description: |
#   Turns minors ("1.36") and server versions with vendor suffixes ("v1.33.1-eks-4096722")
#   into ordinals that compare as numbers: 1.36 is 1036.
# related_resources:
#   - ref: https://kubernetes.io/releases/version-skew-policy/
package upgradescope.lib.versions

# METADATA
# description: The ordinal of a version string; undefined when it does not start with MAJOR.MINOR.
ordinal(v) := (to_number(m[1]) * 1000) + to_number(m[2]) if {
	m := regex.find_all_string_submatch_n(`^v?(\d+)\.(\d+)`, v, 1)[0]
}

# METADATA
# description: The MAJOR.MINOR string of an ordinal.
minor(n) := sprintf("%d.%d", [floor(n / 1000), n % 1000])

# METADATA
# description: |
#   The ordinal of the cluster's version: the emulated minor when the apiserver reports one
#   (it behaves as that minor), else its server version.
server(inventory) := ordinal(inventory.emulatedVersion) if {
	inventory.emulatedVersion
} else := ordinal(inventory.serverVersion)

# METADATA
# description: |
#   The ordinal of input.inventory's cluster version, as server gives it. Rules read this
#   instead of calling server(input.inventory): OPA hashes a function's arguments for its
#   call cache, which converts the whole input inventory, images included.
cluster := server(inventory_versions)

inventory_versions[k] := input.inventory[k] if some k in ["emulatedVersion", "serverVersion"]

# METADATA
# description: The minor after the given one.
next(v) := minor(ordinal(v) + 1)
