package rehearsal

// prepare copies each object without what a replay must not send (Strip).
func prepare(objs []Object) []*item {
	items := make([]*item, 0, len(objs))
	for _, o := range objs {
		if o.Obj == nil {
			continue
		}
		obj := o.Obj.DeepCopy()
		Strip(obj, o.Source.Live)
		items = append(items, &item{src: o, obj: obj})
	}
	return items
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
