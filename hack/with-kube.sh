#!/usr/bin/env bash
# with-kube.sh CMD... - run CMD with two real API servers up: the 1.35 kube-apiserver as built
# ($UPGRADESCOPE_KUBECONFIG) and the same binary emulating 1.32 with beta APIs on
# ($UPGRADESCOPE_KUBECONFIG_EMULATED), which still serves APIs 1.34 removed. Builds them on
# first use (cached under ~/.cache/upgradescope-kube; ~20 min cold) and stops them on exit.
#
# The emulated server's ports and directory follow the first's (APISERVER_PORT + 1, ETCD_PORT
# + 2 and + 3, KUBE_WORK_DIR-emulated), so two runs given their own ports share nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kube="$here/kube-env.sh"
emulated_dir="${KUBE_WORK_DIR:-/tmp/upgradescope-kube}-emulated"
emulated=(env KUBE_WORK_DIR="$emulated_dir" APISERVER_PORT=$((${APISERVER_PORT:-16443} + 1))
  ETCD_PORT=$((${ETCD_PORT:-12379} + 2)) ETCD_PEER_PORT=$((${ETCD_PORT:-12379} + 3))
  APISERVER_EXTRA_ARGS=--emulated-version=1.32 RUNTIME_CONFIG=api/beta=true)

stop() {
  "$kube" stop >/dev/null 2>&1 || true
  "${emulated[@]}" "$kube" stop >/dev/null 2>&1 || true
}
trap stop EXIT

"$kube" install
stop # a previous run may have left servers behind
"$kube" start
"${emulated[@]}" "$kube" start
export UPGRADESCOPE_KUBECONFIG="$("$kube" env | sed 's/^export KUBECONFIG=//')"
export UPGRADESCOPE_KUBECONFIG_EMULATED="$emulated_dir/kubeconfig"
# the audit logs both servers write (docs/audit-policy.yaml), and the 1.35 server's audit
# webhook backend: where it posts, with which token, as which cluster (hack/kube-env.sh)
kube_dir="$(dirname "$UPGRADESCOPE_KUBECONFIG")"
export UPGRADESCOPE_AUDIT_DIR="$kube_dir/audit"
export UPGRADESCOPE_AUDIT_DIR_EMULATED="$emulated_dir/audit"
export UPGRADESCOPE_AUDIT_WEBHOOK_LISTEN="127.0.0.1:${AUDIT_WEBHOOK_PORT:-$((${APISERVER_PORT:-16443} + 2))}"
export UPGRADESCOPE_AUDIT_WEBHOOK_TOKEN_FILE="$kube_dir/audit-webhook.token"
export UPGRADESCOPE_AUDIT_WEBHOOK_CLUSTER="${AUDIT_CLUSTER:-kube-env}"
# the certificate and key the receiver serves the webhook's TLS with, and the test CA that
# signed them, which the webhook trusts
export UPGRADESCOPE_AUDIT_WEBHOOK_TLS_CERT_FILE="$kube_dir/pki/audit-webhook.crt"
export UPGRADESCOPE_AUDIT_WEBHOOK_TLS_KEY_FILE="$kube_dir/pki/audit-webhook.key"
export UPGRADESCOPE_AUDIT_WEBHOOK_CA_FILE="$kube_dir/pki/ca.crt"
# etcd, kube-apiserver and kubectl-convert of 1.35: rehearse's --kube-binaries, fix's oracle
export UPGRADESCOPE_KUBE_BINARIES="$("$kube" bindir)"
"$@"
