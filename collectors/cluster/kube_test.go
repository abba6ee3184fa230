package cluster_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Integration tests run against a real kube-apiserver started by hack/kube-env.sh:
// UPGRADESCOPE_KUBECONFIG points at the 1.35 server, UPGRADESCOPE_KUBECONFIG_EMULATED at the
// same binary emulating 1.32. .ci/run starts both; locally, `make kube-up` and export them.
const (
	envServer   = "UPGRADESCOPE_KUBECONFIG"
	envEmulated = "UPGRADESCOPE_KUBECONFIG_EMULATED"
)

// restConfig loads a context of the kubeconfig in env. In CI a missing server is a failure,
// never a skip: the tests must have run.
func restConfig(t *testing.T, env, context string) *rest.Config {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: .ci/run starts the API servers before the tests", env)
		}
		t.Skipf("%s is not set: run `make kube-up` and export `hack/kube-env.sh env`", env)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	).ClientConfig()
	if err != nil {
		t.Fatalf("load %s context %s: %v", path, context, err)
	}
	return cfg
}

func adminClient(t *testing.T, env string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(restConfig(t, env, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordGets records the paths of GET requests that contain fragment.
func recordGets(paths map[string]bool, fragment string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, fragment) {
				paths[r.URL.Path] = true
			}
			return rt.RoundTrip(r)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
