#!/usr/bin/env bash
# hack/pg-env.sh - a throwaway PostgreSQL on loopback for the store tests: Debian's PostgreSQL 15
# server, a fresh data directory, trust authentication, fsync off. Never use it for real data.
#
# Usage:  pg-env.sh [install|start|stop|status|env|selftest] ...
#   install   apt-get install postgresql-15 when $PG_BIN/initdb is missing (as root; no main cluster)
#   start     initdb in $PG_WORK_DIR (as the unprivileged postgres user when run as root, since
#             initdb refuses root) and start the server on 127.0.0.1:$PG_PORT; a no-op when running
#   stop      stop it (fast shutdown) and remove its data directory
#   status    say whether it runs (exit 0) or not (exit 3, as pg_ctl status)
#   env       print `export UPGRADESCOPE_TEST_POSTGRES_URL=...` for the instance
#   selftest  install + start + a query + stop
# Several commands may be given: `pg-env.sh install start`.
#
# Environment (all optional):
#   PG_BIN        the server's binaries                        (default /usr/lib/postgresql/15/bin)
#   PG_WORK_DIR   data directory, log and unix socket          (default /tmp/upgradescope-pg)
#   PG_PORT       TCP port on 127.0.0.1 (and the socket's name) (default 15432)
# A test that stops its server starts a private one with its own PG_WORK_DIR and PG_PORT, so
# that the shared instance other packages' tests use stays up.
set -euo pipefail

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
WORK="${PG_WORK_DIR:-/tmp/upgradescope-pg}"
PG_PORT="${PG_PORT:-15432}"
DATA="$WORK/data"
URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# as_pg runs a command in $WORK as the postgres user when we are root, else as ourselves.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    (cd "$WORK" && runuser -u postgres -- "$@")
  else
    (cd "$WORK" && "$@")
  fi
}

# ---------------------------------------------------------------- install
cmd_install() {
  if [ -x "$PG_BIN/initdb" ]; then log "PostgreSQL already there: $PG_BIN"; return; fi
  [ "$(id -u)" = 0 ] || die "$PG_BIN/initdb is missing: install postgresql-15 (apt-get needs root)"
  local t0=$SECONDS
  log "apt-get install postgresql-15"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # postgresql-common first, so that installing the server does not create and start a
  # "main" cluster on port 5432 (as the official postgres image does)
  apt-get install -y -qq postgresql-common >/dev/null
  sed -ri 's/^#?\s*(create_main_cluster)\s*=.*$/\1 = false/' /etc/postgresql-common/createcluster.conf
  apt-get install -y -qq postgresql-15 >/dev/null
  [ -x "$PG_BIN/initdb" ] || die "installed postgresql-15 but $PG_BIN/initdb is still missing"
  log "  ... took $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- start
is_running() { [ -f "$DATA/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1; }

cmd_start() {
  [ -x "$PG_BIN/initdb" ] || die "$PG_BIN/initdb is missing: run install first"
  mkdir -p "$WORK"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$WORK"; fi
  chmod 0700 "$WORK"
  if is_running; then log "PostgreSQL already running in $WORK on 127.0.0.1:$PG_PORT"; return; fi
  log "starting PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') in $WORK on 127.0.0.1:$PG_PORT"
  local t0 what="restart"; t0="$(now_ms)"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    what="initdb + start"
    # trust is for connections from this machine only: the server listens on 127.0.0.1 and
    # a socket in a directory only the postgres user can enter
    as_pg "$PG_BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --no-locale \
      --no-instructions >"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
    cat >>"$DATA/postgresql.conf" <<EOF

# hack/pg-env.sh: a throwaway server for tests
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$WORK'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  fi
  as_pg "$PG_BIN/pg_ctl" start -w -t 60 -D "$DATA" -l "$WORK/postgres.log" >/dev/null ||
    { tail -20 "$WORK/postgres.log" >&2; die "PostgreSQL did not start (is port $PG_PORT taken?)"; }
  log "  PostgreSQL ready after $(($(now_ms) - t0)) ms ($what): $URL"
}

# ---------------------------------------------------------------- stop
cmd_stop() {
  [ -d "$WORK" ] || return 0
  if is_running; then
    as_pg "$PG_BIN/pg_ctl" stop -m fast -w -D "$DATA" >/dev/null
    log "stopped PostgreSQL in $WORK"
  fi
  # remove only what start made, so that a mistaken PG_WORK_DIR loses nothing else
  rm -rf "$DATA"
  rm -f "$WORK/postgres.log" "$WORK/initdb.log"
  rmdir "$WORK" 2>/dev/null || true
}

cmd_status() {
  if is_running; then echo "PostgreSQL running in $WORK: $URL"; return 0; fi
  echo "PostgreSQL not running in $WORK"
  return 3
}

cmd_env() { echo "export UPGRADESCOPE_TEST_POSTGRES_URL='$URL'"; }

cmd_selftest() {
  cmd_install
  cmd_start
  trap cmd_stop EXIT
  "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$URL" -c 'SELECT version()' >&2
  log "selftest OK"
}

[ $# -eq 0 ] && set -- selftest
for c in "$@"; do
  case "$c" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    selftest) cmd_selftest ;;
    *) die "unknown command: $c" ;;
  esac
done
