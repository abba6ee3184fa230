#!/usr/bin/env bash
# hack/build-static.sh OUT - build one static upgradescope binary the way releases are built.
# make dist, make image and the Dockerfile all build through here, so the flags live in one
# place. Two builds of the same commit with the same Go give identical bytes: no cgo, no
# paths (-trimpath), no build ID, no VCS stamp beyond the version and commit below.
#
# Environment: GOOS and GOARCH (default: this machine), VERSION (default: git describe, as
# make build stamps it), COMMIT (default: git rev-parse HEAD; empty outside a checkout).
set -euo pipefail

out=${1:?usage: hack/build-static.sh OUT}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/.."

: "${VERSION:=$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
: "${COMMIT:=$(git rev-parse HEAD 2>/dev/null || true)}"

# GOAMD64 and GOARM64 are pinned to Go's defaults so a developer's tuning does not change
# what a release binary runs on (or its bytes).
CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0 go build -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid= -X main.version=$VERSION -X main.commit=$COMMIT" \
	-o "$out" ./cmd/upgradescope
