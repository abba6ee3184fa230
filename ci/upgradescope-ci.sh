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
#   UPGRADESCOPE_VERSION           preinstalled (on PATH), latest, a release such as v0.3.0, a
#                                  commit or a branch; empty (the default): the Action's own
#                                  ref (UPGRADESCOPE_ACTION_REF), else latest
#   UPGRADESCOPE_INSTALL           auto (default): a release downloads its archive, anything
#                                  else builds with go install; release or source forces one
#   UPGRADESCOPE_RELEASE_URL       where releases are downloaded from, <url>/<version>/<file>
#                                  (default https://github.com/upgradescope/upgradescope/releases/download)
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
# GITHUB_ACTION_REF is empty in a composite action's run: (actions/runner#2473), so action.yml
# passes github.action_ref in env:; the runner's own is the fallback.
action_ref=${UPGRADESCOPE_ACTION_REF:-${GITHUB_ACTION_REF:-}}
install=${UPGRADESCOPE_INSTALL:-auto}
release_url=${UPGRADESCOPE_RELEASE_URL:-https://github.com/upgradescope/upgradescope/releases/download}
tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
out=${UPGRADESCOPE_OUTPUT_DIR:-}

release='^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
# A Go pseudo-version (v0.0.0-20260101120000-0123456789ab) looks like a release but names a
# commit: it was never tagged, so nothing is published for it.
pseudo='[0-9]{14}-[0-9a-f]{12}$'
# A commit or a branch: what go install can build. A release and a commit fit it too.
ref='^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$'
# The binary follows the Action's ref, so pinning the Action pins both: a release tag installs
# that release, a branch or a commit builds that very source. The script of main never runs
# with the binary of the latest tag.
version_name=version
if [ -z "$version" ]; then
	version=latest
	if [ -n "$action_ref" ]; then
		version=$action_ref version_name="the Action's ref"
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
case $version in
preinstalled | latest) ;;
*)
	# grep judges line by line: a value of several lines is refused before it.
	if [ "$(printf '%s' "$version" | wc -l)" -ne 0 ] || ! printf '%s' "$version" | grep -Eq "$ref"; then
		die "$version_name \"$(shown "$version")\": want preinstalled, latest, a release such as v0.3.0, a commit or a branch"
	fi
	;;
esac
case $install in
auto | release | source) ;;
*) die "install \"$(shown "$install")\": want auto, release or source" ;;
esac
case $release_url in
https://* | http://*) ;;
*) die "release-url \"$(shown "$release_url")\": want an http(s) URL, the releases' download root" ;;
esac

# fetch URL FILE downloads with curl, else wget, following redirects (GitHub serves assets from
# another host); an HTTP error (404 too) fails.
fetch() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --retry 2 -o "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1"
	else
		die "neither curl nor wget is on PATH to download $(shown "$1"): install one, or set install: source"
	fi
}

# sha256_check DIR checks the SHA256SUMS lines on stdin against the files in DIR.
sha256_check() {
	if command -v sha256sum >/dev/null 2>&1; then
		(cd "$1" && sha256sum -c -)
	else
		(cd "$1" && shasum -a 256 -c -)
	fi
}

# release_platform prints the os/arch of this machine when make dist builds an archive for it.
release_platform() {
	os=$(uname -s | tr '[:upper:]' '[:lower:]')
	case $(uname -m) in
	x86_64 | amd64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) arch=$(uname -m) ;;
	esac
	case $os/$arch in
	linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64) printf '%s/%s\n' "$os" "$arch" ;;
	*) return 1 ;;
	esac
}

# install_release puts the release archive's binary in $bin: the archive make dist writes for
# this platform, installed only when it matches its line of the release's SHA256SUMS.
install_release() {
	name=upgradescope_${version}_${platform%/*}_${platform#*/}.tar.gz
	url=${release_url%/}/$version
	printf 'upgradescope-ci: installing upgradescope %s (%s) from %s, checked against its SHA256SUMS\n' \
		"$version" "$platform" "$(shown "$url")" >&2
	dl=$(mktemp -d "$tmp/upgradescope-dl.XXXXXX") || die "cannot create a directory under $(shown "$tmp")"
	fetch "$url/SHA256SUMS" "$dl/SHA256SUMS" ||
		die "cannot download $(shown "$url")/SHA256SUMS: is $version a release? (install: source builds it with go install)"
	fetch "$url/$name" "$dl/$name" || die "cannot download $(shown "$url")/$name"
	# Only this archive's line: another asset's line, missing or wrong, is not our business.
	sums=$(awk -v f="$name" '$2 == f || $2 == "*" f' "$dl/SHA256SUMS")
	[ -n "$sums" ] || die "SHA256SUMS of $version has no line for $name: refusing an archive nothing vouches for"
	[ "$(printf '%s\n' "$sums" | wc -l)" -eq 1 ] || die "SHA256SUMS of $version has several lines for $name: refusing it"
	printf '%s\n' "$sums" | sha256_check "$dl" >/dev/null 2>&1 ||
		die "checksum mismatch: $name does not match its line in $(shown "$url")/SHA256SUMS; refusing to install it"
	tar -xzf "$dl/$name" -C "$bin" upgradescope || die "cannot unpack upgradescope from $name"
	rm -rf "$dl"
}

# install_source builds $version with go install into $bin: any commit or branch, at the price
# of a build.
install_source() {
	printf 'upgradescope-ci: building upgradescope %s from source (%s): go install %s@%s\n' \
		"$(shown "$version")" "$1" "$module" "$(shown "$version")" >&2
	command -v go >/dev/null 2>&1 || die "go install needs go on PATH: set up Go first, pin the Action to a release tag (vX.Y.Z) to download its binary, or install upgradescope and set version: preinstalled"
	GOBIN=$bin go install "$module@$version" || die "go install $module@$(shown "$version") failed"
}

# Install unless told the binary is on PATH: a release version downloads its archive (seconds),
# anything else builds with go install (minutes).
if [ "$version" != preinstalled ]; then
	is_release=false
	if printf '%s' "$version" | grep -Eq "$release" && ! printf '%s' "$version" | grep -Eq "$pseudo"; then
		is_release=true
	fi
	platform=$(release_platform) || platform=
	how=source why="install: source"
	case $install in
	release)
		$is_release || die "install release needs a release version such as v0.3.0, not $version_name \"$(shown "$version")\": only tags are released"
		[ -n "$platform" ] || die "install release: no release archive is built for $(uname -s)/$(uname -m)"
		how=release
		;;
	auto)
		if [ "$version" = latest ]; then
			why="latest is resolved by go install; name a release such as v0.3.0 to download it"
		elif ! $is_release; then
			why="$version is not a release tag, so no archive is published for it"
		elif [ -z "$platform" ]; then
			why="no release archive is built for $(uname -s)/$(uname -m)"
		else
			how=release
		fi
		;;
	esac
	# A directory of its own: a shared /tmp must not let another user swap the binary.
	bin=$(mktemp -d "$tmp/upgradescope-bin.XXXXXX") || die "cannot create a directory under $(shown "$tmp")"
	if [ "$how" = release ]; then
		install_release
	else
		install_source "$why"
	fi
	PATH=$bin:$PATH
	export PATH
	if [ -n "${GITHUB_PATH:-}" ]; then
		printf '%s\n' "$bin" >>"$GITHUB_PATH"
	fi
	installed=$("$bin/upgradescope" version 2>&1) || die "the installed upgradescope does not run: $(shown "$installed")"
	printf 'upgradescope-ci: installed %s\n' "$(shown "$installed")" >&2
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
