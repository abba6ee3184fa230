#!/usr/bin/env bash
# hack/kube-env.sh - a real etcd + kube-apiserver on loopback for integration tests,
# built from source through the Go module proxy (no Docker, no binary downloads).
#
# Usage:  kube-env.sh [install|start|smoke|stop|env|selftest] ...
#   install   build etcd, kube-apiserver, kubectl-convert (and kubectl if missing) into
#             $KUBE_BIN_ROOT (cached)
#   start     generate certs + kubeconfig, start etcd and kube-apiserver, wait for /readyz
#   smoke     prove it works: namespace, deployment, pod, node, CRD (+SSA), CR, /metrics
#   stop      stop the processes started by `start` (by PID file) and remove the data dir
#   env       print `export KUBECONFIG=...` lines for the running instance
#   bindir    print the directory holding etcd, kube-apiserver and kubectl-convert (after install)
#   selftest  install + start + smoke + stop
# Several commands may be given: `kube-env.sh install start smoke stop`.
#
# Environment (all optional):
#   KUBE_VERSION        Kubernetes version to build               (default 1.35.4)
#   ETCD_VERSION        etcd version to build                       (default 3.6.16)
#   ETCD_SOURCE         go (build ETCD_VERSION from the module proxy) | debian (unpack Debian's
#                       etcd-server 3.4.x .deb without installing it: seconds instead of minutes,
#                       but an etcd that Kubernetes no longer supports officially)  (default go)
#   KUBE_BIN_ROOT       cache root for built binaries    (default $HOME/.cache/upgradescope-kube)
#   KUBE_WORK_DIR       certs, kubeconfig, etcd data, logs, PIDs    (default /tmp/upgradescope-kube-<version>)
#   APISERVER_PORT      kube-apiserver secure port on 127.0.0.1     (default 16443)
#   ETCD_PORT           etcd client port on 127.0.0.1               (default 12379; peer port = +1)
#   RUNTIME_CONFIG      extra --runtime-config (default: enable deprecated-but-served betas, see below)
#   APISERVER_EXTRA_ARGS  extra kube-apiserver flags (space separated)
#   BUILD_KUBECTL       1 = always build kubectl of KUBE_VERSION; 0 = use kubectl from PATH if any (default 0)
#   AUDIT_WEBHOOK_PORT  loopback port the audit webhook backend posts to  (default APISERVER_PORT + 2)
#   AUDIT_CLUSTER       cluster name in the webhook's URL                 (default kube-env)
# Audit: the server logs what docs/audit-policy.yaml selects to $KUBE_WORK_DIR/audit/audit.log
# (rotated at 1 MB, gzip-compressed) and posts the same events in batches to
# https://127.0.0.1:$AUDIT_WEBHOOK_PORT/api/v1/audit/$AUDIT_CLUSTER with the bearer
# token in $KUBE_WORK_DIR/audit-webhook.token (what `upgradescope serve` takes as an ingest
# token), trusting the test CA: serve listens there with --tls-cert-file
# $KUBE_WORK_DIR/pki/audit-webhook.crt --tls-key-file $KUBE_WORK_DIR/pki/audit-webhook.key
# (client-go sends a kubeconfig's token to an https server only). Nothing need listen there:
# the batch backend drops what it cannot deliver.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.35.4}"
KUBE_VERSION="${KUBE_VERSION#v}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
ETCD_VERSION="${ETCD_VERSION#v}"
KUBE_BIN_ROOT="${KUBE_BIN_ROOT:-$HOME/.cache/upgradescope-kube}"
BIN_DIR="$KUBE_BIN_ROOT/bin/k8s-$KUBE_VERSION"
ETCD_SOURCE="${ETCD_SOURCE:-go}"
if [ "$ETCD_SOURCE" = debian ]; then
  ETCD_BIN="$KUBE_BIN_ROOT/bin/etcd-debian/etcd"
else
  ETCD_BIN="$KUBE_BIN_ROOT/bin/etcd-$ETCD_VERSION/etcd"
fi
SRC_ROOT="$KUBE_BIN_ROOT/src"
WORK="${KUBE_WORK_DIR:-/tmp/upgradescope-kube-$KUBE_VERSION}"
APISERVER_PORT="${APISERVER_PORT:-16443}"
ETCD_PORT="${ETCD_PORT:-12379}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-$((ETCD_PORT + 1))}"
BUILD_KUBECTL="${BUILD_KUBECTL:-0}"
AUDIT_WEBHOOK_PORT="${AUDIT_WEBHOOK_PORT:-$((APISERVER_PORT + 2))}"
AUDIT_CLUSTER="${AUDIT_CLUSTER:-kube-env}"
HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KUBE_MINOR="$(echo "$KUBE_VERSION" | cut -d. -f2)"
STAGING_VERSION="0.${KUBE_VERSION#1.}"   # k8s.io/api etc. are published as v0.<minor>.<patch>

# Beta group/versions that are deprecated but still served (off by default) per minor, so that
# tests can create objects at a deprecated GV and see apiserver_requested_deprecated_apis.
default_runtime_config() {
  if [ "$KUBE_MINOR" -ge 35 ]; then
    echo "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,networking.k8s.io/v1beta1=true,storage.k8s.io/v1beta1=true,certificates.k8s.io/v1alpha1=true,coordination.k8s.io/v1alpha2=true"
  elif [ "$KUBE_MINOR" -ge 32 ]; then
    echo "resource.k8s.io/v1beta1=true,networking.k8s.io/v1beta1=true,storage.k8s.io/v1beta1=true"
  else
    echo ""   # 1.29-1.31 serve flowcontrol.apiserver.k8s.io/v1beta3 (removed in 1.32) by default
  fi
}
RUNTIME_CONFIG="${RUNTIME_CONFIG-$(default_runtime_config)}"

export GOTOOLCHAIN=local   # never download a Go toolchain
export GOFLAGS="${GOFLAGS:-} -modcacherw"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
timed() { local t0=$SECONDS; "$@"; log "  ... took $((SECONDS - t0))s"; }

need_tools() {
  local missing=()
  for t in openssl curl; do command -v "$t" >/dev/null || missing+=("$t"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

kubectl_bin() {
  if [ -x "$BIN_DIR/kubectl" ]; then echo "$BIN_DIR/kubectl"; return; fi
  command -v kubectl || die "no kubectl: run with BUILD_KUBECTL=1 install"
}

# ---------------------------------------------------------------- install
build_etcd() {
  if [ -x "$ETCD_BIN" ]; then log "etcd already there: $ETCD_BIN"; return; fi
  if [ "$ETCD_SOURCE" = debian ]; then
    # `apt-get install etcd-server` would also start a daemon on :2379; only unpack the binary
    local t; t="$(mktemp -d)"
    [ -n "$(find /var/lib/apt/lists -name '*_Packages' 2>/dev/null | head -1)" ] || apt-get update -qq
    (cd "$t" && apt-get download -qq etcd-server 2>/dev/null && dpkg -x etcd-server_*.deb x)
    mkdir -p "$(dirname "$ETCD_BIN")"
    cp "$t/x/usr/bin/etcd" "$ETCD_BIN"
    rm -rf "$t"
    return
  fi
  # go install go.etcd.io/etcd/server/v3@vX fails (its go.mod has ../ replace directives),
  # so build the main package from a throwaway module that requires it.
  local d="$SRC_ROOT/etcd-$ETCD_VERSION"
  rm -rf "$d"; mkdir -p "$d" "$(dirname "$ETCD_BIN")"
  cat >"$d/go.mod" <<EOF
module local/etcdbuild

go 1.26
EOF
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$d/tools.go"
  log "building etcd $ETCD_VERSION"
  (cd "$d" && { go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >"$d/go-get.log" 2>&1 ||
    { cat "$d/go-get.log" >&2; exit 1; }; } &&
    go build -trimpath -ldflags "-s -w" -o "$ETCD_BIN" go.etcd.io/etcd/server/v3)
}

prepare_k8s_source() {
  local d="$SRC_ROOT/kubernetes-$KUBE_VERSION"
  if [ -f "$d/.prepared" ]; then echo "$d"; return; fi
  log "downloading k8s.io/kubernetes@v$KUBE_VERSION through the module proxy"
  local mod
  mod="$(cd /tmp && go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
  [ -d "$mod" ] || die "module download failed"
  rm -rf "$d"; mkdir -p "$SRC_ROOT"
  cp -r "$mod" "$d"; chmod -R u+w "$d"
  # The module zip lacks ./staging (nested modules); point every staging replace at the
  # published k8s.io/<name> v0.<minor>.<patch> module instead, and drop the workspace file.
  rm -rf "$d/go.work" "$d/go.work.sum" "$d/vendor"
  sed -i -E "s#^([[:space:]]*)(k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+[[:space:]]*\$#\1\2 => \2 v$STAGING_VERSION#" "$d/go.mod"
  if grep -q '=> \./staging' "$d/go.mod"; then die "unhandled staging replace in go.mod"; fi
  # Some staging modules that kube-apiserver/kubectl never import (kube-proxy, sample-*, ...) are
  # not served for every patch (e.g. v0.31.14): replace those with an empty local stub module,
  # which is enough for the module graph to load.
  local mods missing m
  mods="$(sed -n -E "s#^[[:space:]]*(k8s\.io/[a-z0-9-]+) => k8s\.io/[a-z0-9-]+ v$STAGING_VERSION[[:space:]]*\$#\1@v$STAGING_VERSION#p" "$d/go.mod")"
  # shellcheck disable=SC2086
  missing="$(cd /tmp && go list -m -e -f '{{if .Error}}{{.Path}}{{end}}' $mods 2>/dev/null || true)"
  for m in $missing; do
    log "  $m@v$STAGING_VERSION is not served; replacing it with an empty stub module"
    mkdir -p "$d/_stubs/$m"
    printf 'module %s\n\ngo 1.22\n' "$m" >"$d/_stubs/$m/go.mod"
    sed -i -E "s#^([[:space:]]*$m =>) $m v$STAGING_VERSION[[:space:]]*\$#\1 ./_stubs/$m#" "$d/go.mod"
  done
  touch "$d/.prepared"
  echo "$d"
}

version_ldflags() {
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$KUBE_MINOR"
    ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

build_k8s() {
  mkdir -p "$BIN_DIR"
  local targets=()
  [ -x "$BIN_DIR/kube-apiserver" ] || targets+=(kube-apiserver)
  # kubectl-convert is the oracle of upgradescope fix's tests (convert/oracle_test.go)
  [ -x "$BIN_DIR/kubectl-convert" ] || targets+=(kubectl-convert)
  if [ "$BUILD_KUBECTL" = 1 ] || ! command -v kubectl >/dev/null; then
    [ -x "$BIN_DIR/kubectl" ] || targets+=(kubectl)
  fi
  if [ ${#targets[@]} -eq 0 ]; then log "kube-apiserver $KUBE_VERSION already built in $BIN_DIR"; return; fi
  local src; src="$(prepare_k8s_source)"
  log "go mod download for kubernetes $KUBE_VERSION"
  (cd "$src" && go mod download)
  local t
  for t in "${targets[@]}"; do
    log "building $t $KUBE_VERSION"
    (cd "$src" && timed go build -mod=mod -trimpath -ldflags "$(version_ldflags)" -o "$BIN_DIR/$t" "./cmd/$t")
  done
}

cmd_install() {
  need_tools
  command -v go >/dev/null || die "go is required"
  timed build_etcd
  timed build_k8s
  # one directory holding etcd and kube-apiserver, the layout setup-envtest produces, for
  # `upgradescope rehearse --kube-binaries "$(hack/kube-env.sh bindir)"`
  ln -sf "$ETCD_BIN" "$BIN_DIR/etcd"
  ls -la "$ETCD_BIN" "$BIN_DIR" >&2
}

# ---------------------------------------------------------------- start
gen_certs() {
  local c="$WORK/pki"
  mkdir -p "$c"
  sign() { # name subject extfile-content
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "$2" -keyout "$c/$1.key" -out "$c/$1.csr" 2>/dev/null
    printf '%b' "$3" >"$c/$1.ext"
    openssl x509 -req -in "$c/$1.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial \
      -days 3650 -extfile "$c/$1.ext" -out "$c/$1.crt" 2>/dev/null
  }
  # the audit webhook's receiver (upgradescope serve --tls-cert-file) on loopback: client-go
  # sends a kubeconfig's token to an https server only, so the webhook posts over TLS
  [ -f "$c/ca.key" ] && [ ! -f "$c/audit-webhook.crt" ] && sign audit-webhook "/CN=upgradescope-audit-webhook" \
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
  [ -f "$c/admin.crt" ] && return
  log "generating certificates in $c"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=upgradescope-test-ca" -keyout "$c/ca.key" -out "$c/ca.crt" 2>/dev/null
  sign audit-webhook "/CN=upgradescope-audit-webhook" \
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
  sign apiserver "/CN=kube-apiserver" \
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
  sign admin "/O=system:masters/CN=upgradescope-admin" \
    "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
  openssl genrsa -out "$c/sa.key" 2048 2>/dev/null
  openssl rsa -in "$c/sa.key" -pubout -out "$c/sa.pub" 2>/dev/null
  # static tokens: an admin and an unprivileged user (no RBAC bindings) for permission tests
  printf '%s,upgradescope-token-admin,uid-admin,"system:masters"\n%s,upgradescope-viewer,uid-viewer\n' \
    "$(openssl rand -hex 16)" "$(openssl rand -hex 16)" >"$c/tokens.csv"
}

write_kubeconfig() {
  local k="$WORK/kubeconfig" p="$WORK/pki"
  b64() { base64 -w0 <"$1"; }
  cat >"$k.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(b64 "$p/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$p/admin.crt")
    client-key-data: $(b64 "$p/admin.key")
- name: token-admin
  user:
    token: $(sed -n 1p "$p/tokens.csv" | cut -d, -f1)
- name: viewer
  user:
    token: $(sed -n 2p "$p/tokens.csv" | cut -d, -f1)
contexts:
- name: admin
  context: {cluster: test, user: admin}
- name: token-admin
  context: {cluster: test, user: token-admin}
- name: viewer
  context: {cluster: test, user: viewer}
current-context: admin
EOF
  chmod 600 "$k.tmp"
  mv "$k.tmp" "$k"
}

is_running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_ready() { # url what timeout
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    if curl -fsS --max-time 2 --cacert "$WORK/pki/ca.crt" --cert "$WORK/pki/admin.crt" \
      --key "$WORK/pki/admin.key" "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}

cmd_start() {
  need_tools
  [ -x "$BIN_DIR/kube-apiserver" ] && [ -x "$ETCD_BIN" ] || die "binaries missing: run install first"
  mkdir -p "$WORK"
  gen_certs
  if ! is_running "$WORK/etcd.pid"; then
    log "starting etcd ($ETCD_BIN) on 127.0.0.1:$ETCD_PORT"
    local t0=$SECONDS
    "$ETCD_BIN" --name test --data-dir "$WORK/etcd-data" \
      --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster "test=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
      --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn \
      >"$WORK/etcd.log" 2>&1 &
    echo $! >"$WORK/etcd.pid"
    local i
    for ((i = 0; i < 150; i++)); do
      curl -fsS --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"' && break
      is_running "$WORK/etcd.pid" || { tail -20 "$WORK/etcd.log" >&2; die "etcd exited"; }
      sleep 0.2
    done
    log "  etcd healthy after $((SECONDS - t0))s"
  fi
  if ! is_running "$WORK/kube-apiserver.pid"; then
    log "starting kube-apiserver $KUBE_VERSION on https://127.0.0.1:$APISERVER_PORT (runtime-config: ${RUNTIME_CONFIG:-<default>})"
    local t0=$SECONDS
    local args=(
      --etcd-servers "http://127.0.0.1:$ETCD_PORT"
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT"
      --cert-dir "$WORK/pki"
      --tls-cert-file "$WORK/pki/apiserver.crt" --tls-private-key-file "$WORK/pki/apiserver.key"
      --client-ca-file "$WORK/pki/ca.crt" --token-auth-file "$WORK/pki/tokens.csv"
      --authorization-mode RBAC
      --service-account-issuer https://kubernetes.default.svc.cluster.local
      --service-account-key-file "$WORK/pki/sa.pub" --service-account-signing-key-file "$WORK/pki/sa.key"
      --service-cluster-ip-range 10.0.0.0/24
      --allow-privileged=true
      # no kube-controller-manager runs, so no default ServiceAccount is ever created: let Pods in without it
      --disable-admission-plugins ServiceAccount
      # the "kubernetes" Service endpoints cannot be 127.0.0.1 (loopback is rejected): skip them
      --endpoint-reconciler-type none
      --v 1
      --audit-policy-file "$WORK/audit-policy.yaml"
      --audit-log-path "$WORK/audit/audit.log" --audit-log-maxsize 1 --audit-log-maxbackup 20 --audit-log-compress
      --audit-webhook-config-file "$WORK/audit-webhook.kubeconfig"
      --audit-webhook-mode batch --audit-webhook-batch-max-wait 1s --audit-webhook-initial-backoff 1s
    )
    write_audit_config
    [ -n "$RUNTIME_CONFIG" ] && args+=(--runtime-config "$RUNTIME_CONFIG")
    # shellcheck disable=SC2206
    [ -n "${APISERVER_EXTRA_ARGS:-}" ] && args+=($APISERVER_EXTRA_ARGS)
    "$BIN_DIR/kube-apiserver" "${args[@]}" >"$WORK/kube-apiserver.log" 2>&1 &
    echo $! >"$WORK/kube-apiserver.pid"
    local i ok=0
    for ((i = 0; i < 600; i++)); do
      if wait_ready "https://127.0.0.1:$APISERVER_PORT/readyz" readyz 1; then ok=1; break; fi
      is_running "$WORK/kube-apiserver.pid" || { tail -30 "$WORK/kube-apiserver.log" >&2; die "kube-apiserver exited"; }
    done
    [ $ok = 1 ] || { tail -30 "$WORK/kube-apiserver.log" >&2; die "kube-apiserver not ready"; }
    log "  kube-apiserver ready after $((SECONDS - t0))s"
  fi
  write_kubeconfig
  log "KUBECONFIG=$WORK/kubeconfig (contexts: admin [client cert, system:masters], token-admin, viewer [no RBAC])"
}

# write_audit_config writes the audit policy (the one docs/audit.md gives users) and the
# webhook backend's kubeconfig with a fresh token.
write_audit_config() {
  rm -rf "$WORK/audit" && mkdir -p "$WORK/audit"
  cp "$HACK_DIR/../docs/audit-policy.yaml" "$WORK/audit-policy.yaml"
  [ -s "$WORK/audit-webhook.token" ] || (umask 077 && openssl rand -hex 24 >"$WORK/audit-webhook.token")
  (umask 077 && cat >"$WORK/audit-webhook.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: upgradescope
    cluster:
      server: https://127.0.0.1:$AUDIT_WEBHOOK_PORT/api/v1/audit/$AUDIT_CLUSTER
      certificate-authority-data: $(base64 -w0 <"$WORK/pki/ca.crt")
users:
  - name: apiserver
    user:
      token: $(cat "$WORK/audit-webhook.token")
contexts:
  - name: default
    context: {cluster: upgradescope, user: apiserver}
current-context: default
EOF
  )
}

cmd_env() { echo "export KUBECONFIG=$WORK/kubeconfig"; }
cmd_bindir() { echo "$BIN_DIR"; }

# ---------------------------------------------------------------- smoke
cmd_smoke() {
  local kc; kc="$(kubectl_bin)"
  export KUBECONFIG="$WORK/kubeconfig"
  local t0=$SECONDS
  log "kubectl: $("$kc" version --client -o json | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p' | head -1)  server: $("$kc" get --raw /version | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p')"
  "$kc" create namespace smoke --dry-run=client -o yaml | "$kc" apply -f - >/dev/null
  "$kc" -n smoke create deployment web --image=registry.invalid/web:1 --replicas=2 --dry-run=client -o yaml | "$kc" apply -f - >/dev/null
  "$kc" apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: smoke, labels: {app: lonely}}
spec: {containers: [{name: c, image: registry.invalid/c:1}]}
---
apiVersion: v1
kind: Node
metadata: {name: fake-node-1, labels: {kubernetes.io/os: linux}}
EOF
  cat >"$WORK/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterreadinesses.upgradescope.example.com
spec:
  group: upgradescope.example.com
  scope: Cluster
  names: {plural: clusterreadinesses, singular: clusterreadiness, kind: ClusterReadiness, listKind: ClusterReadinessList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {targetVersion: {type: string}}}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
EOF
  "$kc" apply --server-side --field-manager=upgradescope-agent -f "$WORK/crd.yaml" >/dev/null
  "$kc" wait --for condition=Established --timeout=60s crd/clusterreadinesses.upgradescope.example.com >/dev/null
  "$kc" apply --server-side --field-manager=upgradescope-agent -f - >/dev/null <<'EOF'
apiVersion: upgradescope.example.com/v1alpha1
kind: ClusterReadiness
metadata: {name: cluster}
spec: {targetVersion: "1.36"}
EOF
  # status subresource write, as the agent does
  "$kc" patch clusterreadiness cluster --subresource=status --type=merge \
    -p '{"status":{"ready":false,"findings":[{"id":"demo","severity":"warning"}]}}' >/dev/null
  # server-side apply the CRD again with a change (second version of the schema)
  sed 's/targetVersion: {type: string}/targetVersion: {type: string}, dryRun: {type: boolean}/' "$WORK/crd.yaml" |
    "$kc" apply --server-side --field-manager=upgradescope-agent -f - >/dev/null
  "$kc" get crd clusterreadinesses.upgradescope.example.com -o jsonpath='{.metadata.managedFields[*].manager}{"\n"}' | grep -q upgradescope-agent
  "$kc" get ns smoke >/dev/null
  "$kc" -n smoke get deployments,pods >&2
  "$kc" get nodes >&2
  "$kc" get clusterreadinesses -o jsonpath='{.items[0].metadata.name} status={.items[0].status}{"\n"}' >&2
  # metadata-only paged list, like the collectors do (PartialObjectMetadataList, limit + continue)
  curl -fsS --cacert "$WORK/pki/ca.crt" --cert "$WORK/pki/admin.crt" --key "$WORK/pki/admin.key" \
    -H 'Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' \
    "https://127.0.0.1:$APISERVER_PORT/api/v1/namespaces?limit=2" >"$WORK/nslist.json"
  grep -Eq '"kind": ?"PartialObjectMetadataList"' "$WORK/nslist.json" || die "metadata-only list failed"
  grep -Eq '"continue": ?"[^"]' "$WORK/nslist.json" || die "expected a continue token"
  log "  metadata-only paged list OK"
  # touch a deprecated-but-served GV so apiserver_requested_deprecated_apis has a sample
  local gv
  for gv in flowcontrol.apiserver.k8s.io/v1beta3/flowschemas resource.k8s.io/v1beta1/resourceclaims networking.k8s.io/v1beta1/servicecidrs storage.k8s.io/v1beta1/volumeattributesclasses; do
    "$kc" get --raw "/apis/$gv?limit=1" >/dev/null 2>&1 && log "  listed deprecated $gv"
  done
  "$kc" get --raw /metrics >"$WORK/metrics.txt"
  grep '^apiserver_requested_deprecated_apis' "$WORK/metrics.txt" >&2 || log "  (no deprecated API was requested)"
  # the unprivileged token user is denied
  if "$kc" --context viewer get pods -A >/dev/null 2>&1; then die "viewer should be forbidden"; fi
  log "smoke OK in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- stop
stop_pid() {
  local f="$WORK/$1.pid"
  if is_running "$f"; then
    local p; p="$(cat "$f")"
    kill "$p" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
    log "stopped $1 ($p)"
  fi
  rm -f "$f"
}

cmd_stop() {
  stop_pid kube-apiserver
  stop_pid etcd
  rm -rf "$WORK/etcd-data"
}

[ $# -eq 0 ] && set -- selftest
for c in "$@"; do
  case "$c" in
    install) cmd_install ;;
    start) cmd_start ;;
    smoke) cmd_smoke ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    bindir) cmd_bindir ;;
    selftest) cmd_install; cmd_start; trap cmd_stop EXIT; cmd_smoke ;;
    *) die "unknown command: $c" ;;
  esac
done
