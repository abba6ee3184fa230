package rehearsal

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// prepare copies each object without what a replay must not send: what the server sets
// (status, and metadata's uid, resourceVersion, generation, creationTimestamp,
// managedFields, selfLink, deletion marks) and, from a live cluster, the addresses it
// allocated (a Service's clusterIP, which a server with another service range refuses).
// kubectl's last-applied annotation goes too: it doubles the bytes sent and the server
// never reads it.
func prepare(objs []Object) []*item {
	items := make([]*item, 0, len(objs))
	for _, o := range objs {
		if o.Obj == nil {
			continue
		}
		obj := o.Obj.DeepCopy()
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
		if o.Source.Live && obj.GetAPIVersion() == "v1" && obj.GetKind() == "Service" {
			stripAllocatedIPs(obj)
		}
		items = append(items, &item{src: o, obj: obj})
	}
	return items
}

// stripAllocatedIPs removes the cluster IPs the live cluster allocated; "None" (headless) is
// the author's choice and stays.
func stripAllocatedIPs(obj *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip == "None" {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
}

// rank orders the objects after namespaces and CRDs as kubectl and Helm install them: what
// others refer to first (service accounts and RBAC, configuration, services), then workloads,
// then the rest, and admission configuration last, so a policy in the set never judges the
// objects beside it.
var rank = map[string]int{
	"ServiceAccount": 0, "Role": 0, "ClusterRole": 0, "RoleBinding": 0, "ClusterRoleBinding": 0,
	"ConfigMap": 1, "Secret": 1,
	"Service": 2,
	"Pod":     3, "ReplicationController": 3, "ReplicaSet": 3, "Deployment": 3, "StatefulSet": 3,
	"DaemonSet": 3, "Job": 3, "CronJob": 3,
	"ValidatingWebhookConfiguration": 5, "MutatingWebhookConfiguration": 5,
	"ValidatingAdmissionPolicy": 5, "ValidatingAdmissionPolicyBinding": 5,
	"MutatingAdmissionPolicy": 5, "MutatingAdmissionPolicyBinding": 5,
}

const rankRest = 4

// phases groups items by rank, in rank order; each phase is replayed after the one before.
func phases(items []*item) [][]*item {
	var out [6][]*item
	for _, it := range items {
		r, ok := rank[it.obj.GetKind()]
		if !ok {
			r = rankRest
		}
		out[r] = append(out[r], it)
	}
	var nonEmpty [][]*item
	for _, p := range out {
		if len(p) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return nonEmpty
}
