package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// The API server serves every Event under core and events.k8s.io: one object, one UID. A
// probe naming both groups observes an Event once, and so does each probe naming one of them,
// whichever group is listed first; none examines an Event twice.
func TestAnEventServedUnderTwoGroupsIsObservedOnceByEachProbe(t *testing.T) {
	c := adminClient(t, envServer)
	ctx := context.Background()
	mark := fmt.Sprintf("event-%d", time.Now().UnixNano()%1e6)
	path := `metadata.annotations["probes.upgradescope.test/mark"]`
	var declared []probe.Declared
	for id, kinds := range map[string][]string{
		"both":   {"core/Event", "events.k8s.io/Event"},
		"core":   {"core/Event"},
		"events": {"events.k8s.io/Event"},
	} {
		declared = append(declared, probe.Declared{ID: "test/" + id, Spec: probe.Spec{ID: id, Kinds: kinds, Path: path, Values: true}})
	}
	set, err := probe.NewSet(declared)
	if err != nil {
		t.Fatal(err)
	}
	col := collector(t, envServer, "admin")
	before := &inventory.Document{}
	col.Probes(ctx, before, set)

	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: mark, Namespace: "default", Annotations: map[string]string{"probes.upgradescope.test/mark": mark}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: mark},
		Reason:         "Probed", Message: "observed once", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "probes-test"}}
	if _, err := c.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Events("default").Delete(context.Background(), mark, metav1.DeleteOptions{}) })
	doc := &inventory.Document{}
	examined := col.Probes(ctx, doc, set)

	was, is := byID(before.Probes), byID(doc.Probes)
	for _, id := range []string{"both", "core", "events"} {
		got := since(was[id], is[id], "default", mark)
		if got.Count != 1 || got.Values[mark] != 1 || len(got.Objects) != 1 {
			t.Errorf("%s: count %d, values %v, objects %q; want the Event once", id, got.Count, got.Values, got.Objects)
		}
	}
	if is["both"].Examined != is["core"].Examined || is["both"].Examined != is["events"].Examined || examined != is["both"].Examined {
		t.Errorf("examined %d, by the probes both %d, core %d, events %d; want every Event once", examined,
			is["both"].Examined, is["core"].Examined, is["events"].Examined)
	}
}

// Clusters up to 1.21 serve every Ingress under extensions and networking.k8s.io, and up to
// 1.15 every Deployment under extensions and apps. The API server the tests run cannot be
// made to (1.35 and its 1.32 emulation serve neither extensions kind), so a fake one serves
// one Ingress and one Deployment under both groups, with one UID each. The knowledge base's
// Ingress probe names both groups, and the pod template probes look at both Deployments:
// each observes its object once, recorded at the group it moved to.
func TestAnIngressAndADeploymentServedUnderTwoGroupsAreObservedOnce(t *testing.T) {
	ingress := map[string]any{"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "3c1e0a5e-ingress",
		"annotations": map[string]any{"kubernetes.io/ingress.class": "nginx"}}}
	deployment := map[string]any{"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "9b7d2f41-deployment"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"volumes": []any{map[string]any{"name": "docker", "hostPath": map[string]any{"path": "/var/run/docker.sock"}}}}}}}
	srv := httptest.NewServer(twoGroupsServer(map[string]map[string]any{
		"extensions/v1beta1":   {"ingresses": ingress, "deployments": deployment},
		"networking.k8s.io/v1": {"ingresses": ingress},
		"apps/v1":              {"deployments": deployment},
	}))
	defer srv.Close()
	col, err := cluster.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	set, err := probe.NewSet([]probe.Declared{
		{ID: "kb/ingress-class-annotation", Spec: probe.Spec{ID: "ingress-class-annotation", Kinds: []string{"extensions/Ingress", "networking.k8s.io/Ingress"},
			Path: `metadata.annotations["kubernetes.io/ingress.class"]`, Values: true}},
		{ID: "kb/pod-host-paths", Spec: probe.Spec{ID: "pod-host-paths", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := &inventory.Document{}
	if n := col.Probes(context.Background(), doc, set); n != 2 {
		t.Errorf("%d objects examined, want 2", n)
	}
	want := map[string]inventory.Probe{
		"kb/ingress-class-annotation": {Available: true, Examined: 1, Count: 1, Values: []inventory.ProbeValue{{Value: "nginx", Count: 1}},
			Objects: []inventory.ProbeObject{{Group: "networking.k8s.io", Kind: "Ingress", Namespace: "default", Name: "web", Values: []string{"nginx"}}}},
		"kb/pod-host-paths": {Available: true, Examined: 1, Count: 1, Values: []inventory.ProbeValue{{Value: "/var/run/docker.sock", Count: 1}},
			Objects: []inventory.ProbeObject{{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web", Values: []string{"/var/run/docker.sock"}}}},
	}
	for _, p := range doc.Probes {
		got := inventory.Probe{Available: p.Available, Examined: p.Examined, Count: p.Count, Values: p.Values, Objects: p.Objects}
		if !reflect.DeepEqual(got, want[p.ID]) {
			t.Errorf("%s observed %+v, want %+v", p.ID, got, want[p.ID])
		}
	}
	if len(doc.Probes) != len(want) {
		t.Errorf("%d observations, want %d", len(doc.Probes), len(want))
	}
}

// twoGroupsServer answers discovery, and a list of one object for each group/version and
// resource (ingresses or deployments) of objects.
func twoGroupsServer(objects map[string]map[string]any) http.Handler {
	kinds := map[string]string{"ingresses": "Ingress", "deployments": "Deployment"}
	routes := map[string]any{
		"/api":    map[string]any{"kind": "APIVersions", "versions": []string{"v1"}},
		"/api/v1": map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{}},
	}
	var groups []any
	for gv, byResource := range objects {
		group, version, _ := strings.Cut(gv, "/")
		at := map[string]any{"groupVersion": gv, "version": version}
		groups = append(groups, map[string]any{"name": group, "versions": []any{at}, "preferredVersion": at})
		var resources []any
		for resource, obj := range byResource {
			resources = append(resources, map[string]any{"name": resource, "namespaced": true, "kind": kinds[resource], "verbs": []string{"get", "list"}})
			routes["/apis/"+gv+"/"+resource] = map[string]any{"apiVersion": gv, "kind": kinds[resource] + "List",
				"metadata": map[string]any{}, "items": []any{obj}}
		}
		routes["/apis/"+gv] = map[string]any{"kind": "APIResourceList", "groupVersion": gv, "resources": resources}
	}
	routes["/apis"] = map[string]any{"kind": "APIGroupList", "groups": groups}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}
