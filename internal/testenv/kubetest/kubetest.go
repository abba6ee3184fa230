// Package kubetest connects integration tests to the real API servers hack/with-kube.sh
// starts: UPGRADESCOPE_KUBECONFIG (1.35) and UPGRADESCOPE_KUBECONFIG_EMULATED (1.32), the
// audit logs they write, and the binaries it built them from (UPGRADESCOPE_KUBE_BINARIES).
package kubetest

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Environment variables naming the servers' kubeconfigs.
const (
	EnvServer   = "UPGRADESCOPE_KUBECONFIG"
	EnvEmulated = "UPGRADESCOPE_KUBECONFIG_EMULATED"
	// EnvBinaries names the directory hack/kube-env.sh builds etcd, kube-apiserver and
	// kubectl-convert into.
	EnvBinaries = "UPGRADESCOPE_KUBE_BINARIES"
	// EnvAuditDir and EnvAuditDirEmulated name the directories the servers write their
	// audit logs to, as docs/audit-policy.yaml selects: audit.log and its rotations (at 1 MB,
	// gzip-compressed).
	EnvAuditDir         = "UPGRADESCOPE_AUDIT_DIR"
	EnvAuditDirEmulated = "UPGRADESCOPE_AUDIT_DIR_EMULATED"
)

// EnvRequire, set to 1 or true, turns a missing server from a skip into a failure. .ci/run
// sets it, where the servers must have run; CI does not count, since GitHub Actions and GitLab
// set it in every contributor's fork.
const EnvRequire = "UPGRADESCOPE_REQUIRE_KUBE"

// Config loads a context ("admin", "viewer", …) of the kubeconfig env names. Without it the
// test is skipped, or fails under EnvRequire.
func Config(t testing.TB, env, context string) *rest.Config {
	t.Helper()
	path := Kubeconfig(t, env)
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	).ClientConfig()
	if err != nil {
		t.Fatalf("load %s context %s: %v", path, context, err)
	}
	// client-go's default 5 requests/s would make set-up take seconds.
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// Kubeconfig is the path the env variable names. Without it the test is skipped, or fails
// under EnvRequire.
func Kubeconfig(t testing.TB, env string) string {
	t.Helper()
	return lookup(t, env)
}

// Binaries is the directory EnvBinaries names, holding etcd, kube-apiserver and
// kubectl-convert of the 1.35 server. Without it the test is skipped, or fails under
// EnvRequire.
func Binaries(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvBinaries)
}

// AuditDir is the audit log directory env (EnvAuditDir or EnvAuditDirEmulated) names.
// Without it the test is skipped, or fails under EnvRequire.
func AuditDir(t testing.TB, env string) string {
	t.Helper()
	return lookup(t, env)
}

// lookup is env's value; without it the test is skipped, or fails under EnvRequire.
func lookup(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		fail, msg := absent(env)
		if fail {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return v
}

// absent says what a test does when env is not set: fail where EnvRequire says the servers
// must have run, else skip. The message is what `make test` counts skips by.
func absent(env string) (fail bool, msg string) {
	if required, _ := strconv.ParseBool(os.Getenv(EnvRequire)); required {
		return true, fmt.Sprintf("%s is not set but %s is: start the API servers first (hack/with-kube.sh)", env, EnvRequire)
	}
	return false, fmt.Sprintf("%s is not set: run the tests under hack/with-kube.sh, or `make kube-up` and export `hack/kube-env.sh env`", env)
}

// LegacyAdmissionPolicies are ValidatingAdmissionPolicies at admissionregistration.k8s.io
// v1beta1, which Kubernetes 1.34 stopped serving: the emulated 1.32 server still does.
var LegacyAdmissionPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1beta1", Resource: "validatingadmissionpolicies"}

// LegacyAdmissionPolicy is a minimal valid v1beta1 ValidatingAdmissionPolicy named name.
func LegacyAdmissionPolicy(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"},
			}}},
			"validations": []any{map[string]any{"expression": "true"}},
		},
	}}
}
