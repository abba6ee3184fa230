package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// notReplayedResources are resources whose objects a controller, a node or the API server
// writes and rewrites: replaying them into a fresh server tests nothing the user wrote.
// Certificate signing requests are one-shot requests, approved or denied long ago.
var notReplayedResources = map[schema.GroupResource]bool{
	{Resource: "events"}:                                                   true,
	{Group: "events.k8s.io", Resource: "events"}:                           true,
	{Resource: "endpoints"}:                                                true,
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:                true,
	{Group: "coordination.k8s.io", Resource: "leases"}:                     true,
	{Group: "coordination.k8s.io", Resource: "leasecandidates"}:            true,
	{Resource: "componentstatuses"}:                                        true,
	{Resource: "nodes"}:                                                    true,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: true,
}

// systemNamespaces are the namespaces every API server makes for itself.
var systemNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}

// serverManagers write objects on their own; an object only they ever wrote is the
// server's or a built-in controller's, made again by the target's.
var serverManagers = map[string]bool{
	"kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true,
	"api-priority-and-fairness-config-producer-v1": true,
}

// recreated says whether obj is made by a controller or the server rather than by a user, so
// the rehearsal leaves it out (it is not a skip: nothing is left unassessed).
func recreated(gr schema.GroupResource, obj *unstructured.Unstructured) bool {
	return controlled(obj) || builtIn(gr, obj) || serverOwned(obj) ||
		obj.GetAnnotations()["apf.kubernetes.io/autoupdate-spec"] == "true" ||
		obj.GetLabels()["kubernetes.io/bootstrapping"] == "rbac-defaults" ||
		helmStorage(gr, obj)
}

// controlled is true for an object with a controller owner (a Deployment's ReplicaSets and
// their Pods, a CronJob's Jobs, a StatefulSet's ControllerRevisions, an operator's output):
// its controller makes it again, at the API it uses, after the upgrade.
func controlled(obj *unstructured.Unstructured) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// builtIn are the objects the API server and the core controllers make in every cluster.
func builtIn(gr schema.GroupResource, obj *unstructured.Unstructured) bool {
	name, ns := obj.GetName(), obj.GetNamespace()
	switch gr {
	case schema.GroupResource{Resource: "namespaces"}:
		return systemNamespaces[name]
	case schema.GroupResource{Resource: "configmaps"}:
		return name == "kube-root-ca.crt" || ns == "kube-system" && name == "extension-apiserver-authentication"
	case schema.GroupResource{Resource: "serviceaccounts"}:
		return name == "default"
	case schema.GroupResource{Resource: "services"}:
		return ns == "default" && name == "kubernetes"
	case schema.GroupResource{Resource: "secrets"}:
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == "kubernetes.io/service-account-token"
	case schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}:
		// A local APIService (no service) is the API server's own group.
		svc, _, _ := unstructured.NestedMap(obj.Object, "spec", "service")
		return svc == nil
	}
	return false
}

// serverOwned is true when every writer in managedFields is the server or a core controller.
func serverOwned(obj *unstructured.Unstructured) bool {
	fields := obj.GetManagedFields()
	for _, f := range fields {
		if !serverManagers[f.Manager] {
			return false
		}
	}
	return len(fields) > 0
}

// helmStorage are Helm's release records: the release's manifest is replayed instead.
func helmStorage(gr schema.GroupResource, obj *unstructured.Unstructured) bool {
	switch gr {
	case schema.GroupResource{Resource: "secrets"}:
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == "helm.sh/release.v1"
	case schema.GroupResource{Resource: "configmaps"}:
		return obj.GetLabels()["owner"] == "helm" && obj.GetLabels()["name"] != "" && obj.GetLabels()["status"] != ""
	}
	return false
}
