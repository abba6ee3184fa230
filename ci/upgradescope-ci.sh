#!/bin/sh
# upgradescope-ci.sh judges rendered manifests in CI: the GitHub Action (action.yml) and the
# GitLab template (ci/gitlab/upgradescope.gitlab-ci.yml) both run it. Everything comes in
# through the environment, never through the command line, so no input is ever interpolated
# into a shell command:
#
#   UPGRADESCOPE_PATH              rendered manifests, a directory or a file (required)
#   UPGRADESCOPE_TARGET            the target minor, e.g. 1.37 (required)
#   UPGRADESCOPE_FAIL_ON           blocker (default), warning or never
#   UPGRADESCOPE_SERVER            a fleet server: `upgradescope gate` instead of `scan`
#   UPGRADESCOPE_CLUSTER           with a server: judge against this stored cluster
#   UPGRADESCOPE_READ_TOKEN        with a server: its read token (read by upgradescope itself)
#   UPGRADESCOPE_ALLOW_INCOMPLETE  true: an unknown verdict does not fail (default false)
#   UPGRADESCOPE_CONFIG            the suppression file (default: .upgradescope.yaml beside PATH)
#   UPGRADESCOPE_SERVER_CA_FILE    with a server: a PEM bundle trusted besides the system roots
#   UPGRADESCOPE_VERSION           preinstalled, latest, a release such as v0.3.0 or a commit,
#                                  installed with go install; empty (the default): the
#                                  Action's own ref (UPGRADESCOPE_ACTION_REF) when it is a
#                                  release tag or a commit, else latest
#   UPGRADESCOPE_OUTPUT_DIR        where the files go (default: a new directory under
#                                  $RUNNER_TEMP); the five files are removed before judging
#
# It writes report.json, upgradescope.sarif, summary.md, gl-code-quality-report.json and
# junit.xml into the output directory, appends the summary to $GITHUB_STEP_SUMMARY and the
# outputs (verdict, ready, score, blockers, warnings and the files' paths) to $GITHUB_OUTPUT
# when those are set, and exits as upgradescope does: 0 passed, 2 the gate failed, 1 an error.
set -u

module=github.com/upgradescope/upgradescope/cmd/upgradescope

# shown makes a value safe to print on one log line: no line breaks, at most 200 bytes.
shown() {
	printf '%s' "$1" | tr '\r\n' '  ' | cut -c1-200
}

die() {
	printf 'upgradescope-ci: %s\n' "$*" >&2
	exit 1
}

random_hex() {
	od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}

path=${UPGRADESCOPE_PATH:-}
target=${UPGRADESCOPE_TARGET:-}
fail_on=${UPGRADESCOPE_FAIL_ON:-blocker}
server=${UPGRADESCOPE_SERVER:-}
cluster=${UPGRADESCOPE_CLUSTER:-}
allow_incomplete=${UPGRADESCOPE_ALLOW_INCOMPLETE:-false}
config=${UPGRADESCOPE_CONFIG:-}
ca_file=${UPGRADESCOPE_SERVER_CA_FILE:-}
version=${UPGRADESCOPE_VERSION:-}
action_ref=${UPGRADESCOPE_ACTION_REF:-}
tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
out=${UPGRADESCOPE_OUTPUT_DIR:-}

release='^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
commit='^[0-9a-f]{7,40}$'
# The binary follows the Action's ref when that pins one, so pinning the Action pins both.
if [ -z "$version" ]; then
	version=latest
	if printf '%s' "$action_ref" | grep -Eq "$release|$commit"; then
		version=$action_ref
	fi
fi

[ -n "$path" ] || die "path is required: the rendered manifests, a directory or a file"
[ -n "$target" ] || die "target is required: a Kubernetes minor such as 1.37"
case $allow_incomplete in
true | false) ;;
*) die "allow-incomplete \"$(shown "$allow_incomplete")\": want true or false" ;;
esac
if [ -n "$cluster" ] && [ -z "$server" ]; then
	die "cluster \"$(shown "$cluster")\" needs server: a cluster is judged against on a fleet server"
fi
if [ -z "$server" ] && [ -n "${UPGRADESCOPE_READ_TOKEN:-}" ]; then
	die "read-token is set but server is not: the token goes to a fleet server only"
fi
if [ -n "$ca_file" ] && [ -z "$server" ]; then
	die "server-ca-file is set but server is not"
fi

# Install unless told the binary is on PATH. Release binaries are not published yet:
# go install builds the version from the module proxy.
case $version in
preinstalled) ;;
latest) ;;
*)
	# grep judges line by line: a value of several lines is refused before it.
	if [ "$(printf '%s' "$version" | wc -l)" -ne 0 ] || ! printf '%s' "$version" | grep -Eq "$release|$commit"; then
		die "version \"$(shown "$version")\": want preinstalled, latest, a release such as v0.3.0 or a commit"
	fi
	;;
esac
if [ "$version" != preinstalled ]; then
	command -v go >/dev/null 2>&1 || die "version $(shown "$version") is installed with go install, and go is not on PATH: set up Go first, or install upgradescope and set version: preinstalled"
	# A directory of its own: a shared /tmp must not let another user swap the binary.
	bin=$(mktemp -d "$tmp/upgradescope-bin.XXXXXX") || die "cannot create a directory under $(shown "$tmp")"
	GOBIN=$bin go install "$module@$version" || die "go install $module@$(shown "$version") failed"
	PATH=$bin:$PATH
	export PATH
	if [ -n "${GITHUB_PATH:-}" ]; then
		printf '%s\n' "$bin" >>"$GITHUB_PATH"
	fi
fi
command -v upgradescope >/dev/null 2>&1 || die "upgradescope is not on PATH (version: preinstalled)"

if [ -z "$out" ]; then
	# A directory per run: a second step's files never stand in for the first's.
	out=$(mktemp -d "$tmp/upgradescope.XXXXXX") || die "cannot create a directory under $(shown "$tmp")"
fi
mkdir -p "$out" || die "cannot create the output directory $(shown "$out")"
report=$out/report.json
sarif=$out/upgradescope.sarif
summary=$out/summary.md
codequality=$out/gl-code-quality-report.json
junit=$out/junit.xml
rm -f "$report" "$sarif" "$summary" "$codequality" "$junit" || die "cannot clear the output directory $(shown "$out")"

# Every value goes in its flag's --name=value form, so one starting with - stays a value.
set -- --files="$path" --target="$target" --fail-on="$fail_on" --output=json --quiet
if [ "$allow_incomplete" = true ]; then
	set -- "$@" --allow-incomplete
fi
if [ -n "$config" ]; then
	set -- "$@" --config="$config"
fi
if [ -n "$server" ]; then
	set -- gate --server="$server" "$@"
	if [ -n "$ca_file" ]; then
		set -- "$@" --server-ca-file="$ca_file"
	fi
	if [ -n "$cluster" ]; then
		set -- "$@" --cluster="$cluster"
	fi
else
	set -- scan "$@"
fi

# On GitHub, what upgradescope prints (warnings quote manifests) is not read as workflow
# commands.
resume=
if [ "${GITHUB_ACTIONS:-}" = true ]; then
	resume=$(random_hex)
	printf '::stop-commands::%s\n' "$resume"
fi
upgradescope "$@" >"$report"
code=$?
if [ -n "$resume" ]; then
	printf '::%s::\n' "$resume"
fi
case $code in
0 | 2) ;;
*) exit "$code" ;;
esac

# One judgement, rendered in every format CI wants.
upgradescope render --report="$report" --output=sarif >"$sarif" || exit 1
upgradescope render --report="$report" --output=markdown >"$summary" || exit 1
upgradescope render --report="$report" --output=gitlab-codequality >"$codequality" || exit 1
upgradescope render --report="$report" --output=junit --fail-on="$fail_on" >"$junit" || exit 1
outputs=$(upgradescope render --report="$report" --output=outputs) || exit 1

# output writes name=value to $GITHUB_OUTPUT in the heredoc form with a random delimiter, so
# no value can end it early and add outputs of its own.
output() {
	delimiter=upgradescope_$(random_hex)
	case $2 in
	*"$delimiter"*) die "output $1 holds its delimiter" ;;
	esac
	printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >>"$GITHUB_OUTPUT"
}

set -f # the values are plain words; no file name expansion
line=
for kv in $outputs; do
	line="$line $kv"
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		case ${kv%%=*} in
		verdict | ready | score | blockers | warnings) output "${kv%%=*}" "${kv#*=}" ;;
		esac
	fi
done
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	output sarif-file "$sarif"
	output report-json "$report"
	output summary-file "$summary"
	output codequality-file "$codequality"
	output junit-file "$junit"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	cat "$summary" >>"$GITHUB_STEP_SUMMARY"
fi
printf 'upgradescope:%s\n' "$line"
printf 'upgradescope: files in %s\n' "$(shown "$out")"
exit "$code"
