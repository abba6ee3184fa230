#!/usr/bin/env bash
# hack/dist.sh - release builds: one archive per platform, SHA256SUMS and a CycloneDX SBOM of
# the Go modules, in DIST_DIR. make dist runs it; tools/image's tests run it for one platform
# twice and compare the bytes.
#
# Every byte is a function of the commit, the Go version and the tar and gzip of the machine:
# binaries from hack/build-static.sh; archives with sorted names, root owner, fixed modes and
# every time at SOURCE_DATE_EPOCH; gzip without name or time; an SBOM without serial number
# or timestamp.
#
# Environment:
#   DIST_DIR           where to write (default dist)
#   PLATFORMS          GOOS/GOARCH list (default linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
#   VERSION, COMMIT    stamped into the binaries (defaults: see hack/build-static.sh)
#   SOURCE_DATE_EPOCH  time of every archive entry (default: the last commit's time)
#   SBOM               0 skips the SBOM (and the tool build it needs the first time); the
#                      SBOM names our own component's license, Apache-2.0 (LICENSE)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${DIST_DIR:-dist}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
: "${VERSION:=$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
: "${COMMIT:=$(git rev-parse HEAD 2>/dev/null || true)}"
: "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
export VERSION COMMIT

# --sort and --owner are GNU tar's; BSD tar (macOS) would write other bytes.
if ! tar --version 2>/dev/null | grep -q 'GNU tar'; then
	echo "hack/dist.sh: needs GNU tar (on macOS: brew install gnu-tar and put gtar first on PATH as tar)" >&2
	exit 1
fi

for p in $platforms; do
	case "$p" in
	linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64) ;;
	*)
		echo "hack/dist.sh: PLATFORMS entry \"$p\" is not one of linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" >&2
		exit 1
		;;
	esac
done
case "$SOURCE_DATE_EPOCH" in
'' | *[!0-9]*)
	echo "hack/dist.sh: SOURCE_DATE_EPOCH \"$SOURCE_DATE_EPOCH\" is not whole seconds since 1970" >&2
	exit 1
	;;
esac

mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

written=()
first_platform_binary() {
	local p
	for p in $platforms; do
		if [ "$p" = linux/amd64 ]; then echo "$work/upgradescope_${VERSION}_linux_amd64/upgradescope"; return; fi
	done
	p=${platforms%% *}
	echo "$work/upgradescope_${VERSION}_${p%/*}_${p#*/}/upgradescope"
}

for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name="upgradescope_${VERSION}_${os}_${arch}"
	mkdir -p "$work/$name"
	GOOS=$os GOARCH=$arch hack/build-static.sh "$work/$name/upgradescope"
	# The archive carries the license it is distributed under (Apache-2.0, section 4(a)).
	cp LICENSE "$work/$name/LICENSE"
	chmod 0755 "$work/$name/upgradescope"
	chmod 0644 "$work/$name/LICENSE"
	tar --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$SOURCE_DATE_EPOCH" --format=ustar \
		-C "$work/$name" -cf - LICENSE upgradescope | gzip -9 -n >"$dir/$name.tar.gz"
	written+=("$name.tar.gz")
done

if [ "${SBOM:-1}" != 0 ]; then
	# The modules the linux/amd64 binary (else the first platform's) links, read from the
	# binary's build info, with its hashes: what ships, not what go.mod lists. The other
	# platforms link the same modules; only files inside them differ.
	sbom_bin=$(first_platform_binary)
	sbom="upgradescope_${VERSION}.cdx.json"
	go tool -modfile=tools/cyclonedx/go.mod cyclonedx-gomod bin -json -std -noserial -notimestamp \
		-version "$VERSION" -output "$dir/$sbom" "$sbom_bin"
	# Our own component's license (LICENSE): cyclonedx-gomod has no flag for it.
	go run -C tools/cyclonedx ./license -id Apache-2.0 "$(cd "$dir" && pwd)/$sbom"
	written+=("$sbom")
fi

# Only what this run wrote: an image archive or an older build in DIST_DIR stays out.
(cd "$dir" && LC_ALL=C sha256sum -- $(printf '%s\n' "${written[@]}" | LC_ALL=C sort) >SHA256SUMS)
echo "wrote ${written[*]} and SHA256SUMS to $dir"
