package cluster_test

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// Integration tests run against a real kube-apiserver started by hack/kube-env.sh:
// UPGRADESCOPE_KUBECONFIG points at the 1.35 server, UPGRADESCOPE_KUBECONFIG_EMULATED at the
// same binary emulating 1.32. .ci/run starts both; locally, `make kube-up` and export them.
const (
	envServer   = kubetest.EnvServer
	envEmulated = kubetest.EnvEmulated
)

// restConfig loads a context of the kubeconfig in env. In CI a missing server is a failure,
// never a skip: the tests must have run.
func restConfig(t *testing.T, env, context string) *rest.Config {
	t.Helper()
	return kubetest.Config(t, env, context)
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
