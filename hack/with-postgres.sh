#!/usr/bin/env bash
# with-postgres.sh CMD... - run CMD with a throwaway PostgreSQL up (hack/pg-env.sh: installed
# with apt-get when missing, initdb in /tmp/upgradescope-pg, 127.0.0.1:${PG_PORT:-15432}),
# its URL exported as UPGRADESCOPE_TEST_POSTGRES_URL, and stop it and remove its data on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pg="$here/pg-env.sh"

stop() { "$pg" stop >/dev/null 2>&1 || true; }
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$pg" install
stop # a previous run may have left a server behind
"$pg" start
eval "$("$pg" env)"
"$@"
