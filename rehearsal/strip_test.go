package rehearsal

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestStripRemovesWhatTheServerGenerated(t *testing.T) {
	const job = `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop, uid: 1234, resourceVersion: "9"}
spec:
  %s
  selector:
    matchLabels: {batch.kubernetes.io/controller-uid: 1234}
  template:
    metadata:
      labels: {app: migrate, controller-uid: 1234, batch.kubernetes.io/controller-uid: 1234, job-name: migrate, batch.kubernetes.io/job-name: migrate}
    spec: {restartPolicy: Never, containers: [{name: m, image: m:1}]}
status: {active: 1}
`
	tests := []struct {
		name, manual string
		live         bool
		wantSelector bool
		wantLabels   map[string]any
	}{
		{"a live Job's generated selector and uid labels go, the author's label stays", "", true, false, map[string]any{"app": "migrate"}},
		{"a live Job with a manual selector keeps them", "manualSelector: true", true, true, nil},
		{"a Job from a file is sent as written, for the server to judge", "", false, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(fmt.Sprintf(job, tt.manual)), &u.Object); err != nil {
				t.Fatal(err)
			}
			Strip(&u, tt.live)
			if _, ok := u.Object["status"]; ok || u.GetUID() != "" || u.GetResourceVersion() != "" {
				t.Errorf("status or server metadata left: %v", u.Object)
			}
			_, hasSelector, _ := unstructured.NestedMap(u.Object, "spec", "selector")
			if hasSelector != tt.wantSelector {
				t.Errorf("selector kept = %v, want %v", hasSelector, tt.wantSelector)
			}
			labels, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "metadata", "labels")
			if tt.wantLabels != nil && !reflect.DeepEqual(labels, tt.wantLabels) {
				t.Errorf("template labels = %v, want %v", labels, tt.wantLabels)
			}
			if tt.wantLabels == nil && len(labels) != 5 {
				t.Errorf("template labels = %v, want all 5 kept", labels)
			}
		})
	}
}

func TestStripKeepsAHeadlessServicesClusterIP(t *testing.T) {
	for ip, want := range map[string]bool{"None": true, "10.0.0.12": false} {
		u := unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"},
			"spec": map[string]any{"clusterIP": ip, "clusterIPs": []any{ip}},
		}}
		Strip(&u, true)
		if _, kept, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); kept != want {
			t.Errorf("clusterIP %s kept = %v, want %v", ip, kept, want)
		}
	}
}

func TestStripRemovesTheNodePortsALiveClusterAllocated(t *testing.T) {
	const svc = `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: 31999
  clusterIP: 10.0.0.7
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080}, {name: https, port: 443, nodePort: 30443}]
`
	for _, tt := range []struct {
		name string
		live bool
	}{
		{"from a live cluster they go, the author's ports stay", true},
		{"from a file they are sent as written", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(svc), &u.Object); err != nil {
				t.Fatal(err)
			}
			Strip(&u, tt.live)
			ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
			_, health, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "healthCheckNodePort")
			nodePorts := 0
			for _, p := range ports {
				if _, ok := p.(map[string]any)["nodePort"]; ok {
					nodePorts++
				}
			}
			if want := map[bool]int{true: 0, false: 2}[tt.live]; nodePorts != want || health == tt.live || len(ports) != 2 {
				t.Errorf("%d node ports and health check port %v kept of %d ports; want %d and %v", nodePorts, health, len(ports), want, !tt.live)
			}
			if len(ports) > 0 && fmt.Sprint(ports[0].(map[string]any)["port"], ports[0].(map[string]any)["targetPort"]) != "80 8080" {
				t.Errorf("the author's port changed: %v", ports[0])
			}
		})
	}
}
