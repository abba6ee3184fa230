package rehearsal

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Strip removes, in place, what a replay must not send: what the server sets (status, and
// metadata's uid, resourceVersion, generation, creationTimestamp, managedFields, selfLink,
// deletion marks) and kubectl's last-applied annotation, which doubles the bytes sent and the
// server never reads. From a live cluster (live), also what that cluster's server generated
// for the object, which another server refuses or generates anew:
//   - a Service's cluster IPs, of that cluster's service range ("None", headless, is the
//     author's and stays), and its node ports and health check node port, of that cluster's
//     node port range: sent back, a test cluster that allocated the same port refuses them as
//     "provided port is already allocated", one with another --service-node-port-range as
//     out of range. A live object does not say whether its author pinned a port, so every
//     one goes and the server allocates anew (the target checks a pinned port as the
//     cluster did when it was written);
//   - a Job's selector and the template labels naming the Job's uid, when the server generated
//     them (manualSelector unset): sent back, the rehearsal server refuses them as "selector
//     not auto-generated".
func Strip(obj *unstructured.Unstructured, live bool) {
	delete(obj.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	if ann := obj.GetAnnotations(); ann != nil {
		delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		if len(ann) == 0 {
			ann = nil
		}
		obj.SetAnnotations(ann)
	}
	if !live {
		return
	}
	switch {
	case obj.GetAPIVersion() == "v1" && obj.GetKind() == "Service":
		stripAllocated(obj)
	case obj.GetAPIVersion() == "batch/v1" && obj.GetKind() == "Job":
		stripGeneratedSelector(obj)
	}
}

// stripAllocated removes the cluster IPs and node ports the live cluster allocated.
func stripAllocated(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "spec", "healthCheckNodePort")
	if ports, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "ports"); ok {
		list, _ := ports.([]any)
		for _, p := range list {
			if m, isMap := p.(map[string]any); isMap {
				delete(m, "nodePort")
			}
		}
	}
	if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip == "None" {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
}

// jobGeneratedLabels are the labels the Job controller's admission writes into a Job's pod
// template when it generates the selector (pkg/registry/batch/job/strategy.go).
var jobGeneratedLabels = []string{
	"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name",
}

func stripGeneratedSelector(obj *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "selector")
	labels, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "template", "metadata", "labels")
	m, isMap := labels.(map[string]any)
	if !ok || !isMap {
		return
	}
	for _, l := range jobGeneratedLabels {
		delete(m, l)
	}
	if len(m) == 0 {
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels")
	}
}
