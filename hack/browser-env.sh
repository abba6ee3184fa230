#!/usr/bin/env bash
# browser-env.sh [CMD...] - what the dashboard's browser tests need, from a fresh machine:
# Debian's chromium (apt-get installed when missing; never a browser downloaded by a test
# tool) and axe-core at the version tools/axe/package-lock.json pins (npm ci into a cache
# directory keyed by the lock file's hash, so the repository holds no node_modules).
#
# With CMD, runs it with UPGRADESCOPE_CHROMIUM and UPGRADESCOPE_AXE exported (chain it like
# hack/with-postgres.sh). Without, prints the two `export` lines for `eval "$(...)"`.
#
# Environment (all optional):
#   UPGRADESCOPE_CHROMIUM   the browser to use               (default: `command -v chromium`)
#   BROWSER_CACHE_DIR       where npm ci installs axe-core   (default ~/.cache/upgradescope/axe)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
lockdir="$root/tools/axe"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

install_chromium() {
  if [ -n "${UPGRADESCOPE_CHROMIUM:-}" ]; then
    [ -x "$UPGRADESCOPE_CHROMIUM" ] || die "UPGRADESCOPE_CHROMIUM=$UPGRADESCOPE_CHROMIUM is not an executable"
    return
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || die "chromium is missing: install Debian's chromium (apt-get needs root)"
    local t0=$SECONDS
    log "apt-get install chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
    log "  ... took $((SECONDS - t0))s"
  fi
  UPGRADESCOPE_CHROMIUM="$(command -v chromium)" || die "installed chromium but it is not on PATH"
  export UPGRADESCOPE_CHROMIUM
  log "browser: $UPGRADESCOPE_CHROMIUM ($("$UPGRADESCOPE_CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
}

# install_axe runs npm ci against a copy of the pinned package files: npm ci checks every
# package against the lock file's integrity hashes and installs nothing the lock does not name.
install_axe() {
  command -v npm >/dev/null 2>&1 || die "npm is missing: it installs axe-core from tools/axe/package-lock.json"
  local hash dir
  hash="$(cat "$lockdir/package.json" "$lockdir/package-lock.json" | sha256sum | cut -c1-16)"
  dir="${BROWSER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/upgradescope/axe}/$hash"
  UPGRADESCOPE_AXE="$dir/node_modules/axe-core/axe.min.js"
  if [ ! -f "$dir/.installed" ] || [ ! -f "$UPGRADESCOPE_AXE" ]; then
    local t0=$SECONDS
    log "npm ci axe-core into $dir"
    mkdir -p "$dir"
    cp "$lockdir/package.json" "$lockdir/package-lock.json" "$dir/"
    npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error >&2
    [ -f "$UPGRADESCOPE_AXE" ] || die "npm ci finished but $UPGRADESCOPE_AXE is missing"
    touch "$dir/.installed"
    log "  ... took $((SECONDS - t0))s"
  fi
  export UPGRADESCOPE_AXE
  log "axe-core: $UPGRADESCOPE_AXE"
}

install_chromium
install_axe
if [ $# -eq 0 ]; then
  printf 'export UPGRADESCOPE_CHROMIUM=%q\nexport UPGRADESCOPE_AXE=%q\n' "$UPGRADESCOPE_CHROMIUM" "$UPGRADESCOPE_AXE"
  exit 0
fi
exec "$@"
