package probe

import (
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// Screening only saves work: for any object, observing the probes its text leaves gives the
// observations observing every probe gives.
func TestScreeningNeverChangesWhatIsObserved(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "host-paths", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true},
		Spec{ID: "tolerations", PodTemplate: true, Path: "spec.tolerations[*].key", Values: true},
		Spec{ID: "seccomp", PodTemplate: true, Path: `metadata.annotations["seccomp.security.alpha.kubernetes.io/pod"]`},
		Spec{ID: "limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: MatchAbsent},
		Spec{ID: "lb", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP", Values: true},
	)
	objects := []struct{ name, kind, text string }{
		{"a Deployment mounting a host path", "Deployment", `{"spec": {"template": {"spec": {"volumes": [{"hostPath": {"path": "/var/run/docker.sock"}}], "containers": [{"name": "a"}]}}}}`},
		{"a Deployment without any", "Deployment", `{"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}}}}`},
		{"a key spelt through a JSON escape", "Deployment", `{"spec": {"template": {"spec": {"volumes": [{"\u0068ostPath": {"path": "/x"}}]}}}}`},
		{"an annotation key with dots", "Deployment", `{"spec": {"template": {"metadata": {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}}}}}`},
		{"a Service pinning its IP", "Service", `{"spec": {"loadBalancerIP": "10.0.0.7"}}`},
		{"a Service without", "Service", `{"spec": {"type": "ClusterIP"}}`},
		{"a ConfigMap nobody probes", "ConfigMap", `{"data": {"loadBalancerIP": "x"}}`},
	}
	group := map[string]string{"Deployment": "apps", "Service": "", "ConfigMap": ""}
	for _, o := range objects {
		t.Run(o.name, func(t *testing.T) {
			all, screened := s.NewObserver(), s.NewObserver()
			obj := decode(t, o.text)
			ref := inventory.ObjectRef{Namespace: "ns", Name: "x"}
			all.Observe(obj, group[o.kind], o.kind, ref)
			if sc, live := s.Screen(group[o.kind], o.kind, []byte(o.text)); live {
				screened.ObserveScreened(obj, group[o.kind], o.kind, ref, sc)
			} else {
				screened.Skip(group[o.kind], o.kind)
			}
			if got, want := screened.Probes(), all.Probes(); !reflect.DeepEqual(got, want) {
				t.Errorf("screened %+v\nwant     %+v", got, want)
			}
		})
	}
}

func TestATextWithoutAPathsNamesScreensItsProbeOut(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "host-paths", PodTemplate: true, Path: "spec.volumes[*].hostPath.path"},
		Spec{ID: "limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: MatchAbsent},
	)
	sc, live := s.Screen("apps", "Deployment", []byte("spec:\n  template:\n    spec:\n      volumes: []\n"))
	if !live || sc[0] || !sc[1] {
		t.Errorf("screen %v, live %v: want host-paths out (no hostPath spelt) and the absent-mode probe in", sc, live)
	}
	if _, live := s.Screen("", "ConfigMap", []byte("hostPath")); live {
		t.Error("a kind no probe looks at has a live probe")
	}
}
