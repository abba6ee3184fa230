package preflight

import (
	"github.com/upgradescope/upgradescope/inventory"
)

// What a node drain does with a pod follows kubectl drain's filters, applied in its order and
// stopping at the first that keeps the pod (makeFilters, and filterPods's short-circuit):
//
//	[kubectl-drain-filters] https://github.com/kubernetes/kubectl/blob/v0.37.1/pkg/drain/filters.go
//	https://github.com/kubernetes/kubectl/blob/v0.37.1/pkg/drain/drain.go
//
//
//   - daemonSetFilter: a pod whose controller is an apps/v1 DaemonSet (exactly that
//     apiVersion and kind) is not evicted, unless it has finished (Succeeded or Failed);
//   - mirrorPodFilter: a pod with the kubernetes.io/config.mirror annotation (a static pod's
//     mirror) is skipped;
//   - localStorageFilter: a pod with an emptyDir volume, unless finished, needs
//     --delete-emptydir-data, which deletes the volume's data;
//   - unreplicatedFilter: a pod with no controller owner reference, unless finished, needs
//     --force, which deletes it for good.
//
// A pod with both an emptyDir and no controller needs both flags; it is in both lists. The
// first filter (skipDeletedFilter) skips pods deleted longer ago than
// --skip-wait-for-delete-timeout, which is off by default: deletion timestamps are not read.
//
// In files mode a static pod manifest (kubeadm's /etc/kubernetes/manifests) has no mirror
// annotation yet: the kubelet adds it to the mirror pod it creates, which drain skips. A Pod
// of kube-system (or naming no namespace) labelled tier=control-plane, as kubeadm labels its
// static pods, or running a control-plane component, is taken for one and skipped too.

// mirrorPodAnnotation is corev1.MirrorPodAnnotationKey.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// helmHookAnnotation marks a chart's hook (a test Pod, a pre-install Job): Helm creates it
// for the hook and, by its hook-delete-policy, deletes it or leaves it finished, so in files
// mode it is no pod a drain meets and no replica a budget counts. A live pod with the
// annotation is a real pod and is judged as any other.
//
//	https://helm.sh/docs/topics/charts_hooks/
const helmHookAnnotation = "helm.sh/hook"

// helmHook says whether a manifest is a Helm hook.
func helmHook(obj map[string]any) bool {
	_, ok := mapAt(obj, "metadata", "annotations")[helmHookAnnotation]
	return ok
}

// drainSeen counts the pods (or, in files mode, the objects that make pods) examined.
type drainSeen struct {
	examined     int
	unreplicated podsSeen
	localStorage podsSeen
}

// podsSeen counts pods and keeps the first inventory.MaxObjectRefs of them by reference.
type podsSeen struct {
	count   int
	objects bounded[inventory.ObjectRef]
}

func (p *podsSeen) add(ref inventory.ObjectRef) {
	p.count++
	p.objects.max = inventory.MaxObjectRefs
	p.objects.add(ref, refOrder)
}

func (p *podsSeen) merge(other *podsSeen) {
	p.count += other.count
	p.objects.max = inventory.MaxObjectRefs
	p.objects.merge(&other.objects, refOrder)
}

func (p *podsSeen) list() inventory.PodList {
	objects, omitted := p.objects.section(refOrder)
	if len(objects) == 0 {
		objects = nil
	}
	return inventory.PodList{Count: p.count, Objects: objects, ObjectsOmitted: omitted}
}

func (d *drainSeen) merge(other *drainSeen) {
	d.examined += other.examined
	d.unreplicated.merge(&other.unreplicated)
	d.localStorage.merge(&other.localStorage)
}

func (d *drainSeen) section() *inventory.DrainPods {
	if d.examined == 0 {
		return nil
	}
	return &inventory.DrainPods{Examined: d.examined, Unreplicated: d.unreplicated.list(), LocalStorage: d.localStorage.list()}
}

// drainPod applies kubectl drain's filters to a pod.
func (r *Recorder) drainPod(obj map[string]any, ref inventory.ObjectRef) {
	if r.manifests && helmHook(obj) {
		return
	}
	r.drain.examined++
	phase := str(obj, "status", "phase")
	finished := phase == "Succeeded" || phase == "Failed"
	controller := controllerOf(obj)
	if controller != nil && str(controller, "apiVersion") == "apps/v1" && str(controller, "kind") == "DaemonSet" && !finished {
		return
	}
	if _, mirror := mapAt(obj, "metadata", "annotations")[mirrorPodAnnotation]; mirror {
		return
	}
	if r.manifests && staticPodManifest(obj, ref) {
		return
	}
	if finished {
		return
	}
	if hasEmptyDir(mapAt(obj, "spec")) {
		r.drain.localStorage.add(ref)
	}
	if controller == nil {
		r.drain.unreplicated.add(ref)
	}
}

// drainTemplate counts, in files mode, a workload whose pods a drain will meet: they all have
// a controller, so only an emptyDir volume in the pod template matters. The pods of a
// DaemonSet are never evicted, and a Helm hook's are not there to meet.
func (r *Recorder) drainTemplate(obj map[string]any, ref inventory.ObjectRef, group, kind string) {
	if !r.manifests || helmHook(obj) {
		return
	}
	r.drain.examined++
	path, ok := templatePaths[kind][group]
	if !ok || kind == "DaemonSet" {
		return
	}
	if hasEmptyDir(mapAt(mapAt(obj, path...), "spec")) {
		r.drain.localStorage.add(ref)
	}
}

// controllerOf is the first owner reference marked controller, as metav1.GetControllerOf
// answers it; nil when there is none.
func controllerOf(obj map[string]any) map[string]any {
	for _, o := range listAt(obj, "metadata", "ownerReferences") {
		if c, ok := at(o, "controller").(bool); ok && c {
			return mapAt(o)
		}
	}
	return nil
}

// hasEmptyDir says whether a pod spec has an emptyDir volume (kubectl drain's
// hasLocalStorage: volume.EmptyDir != nil, so `emptyDir: {}` counts).
func hasEmptyDir(spec map[string]any) bool {
	for _, v := range listAt(spec, "volumes") {
		if m := mapAt(v); m != nil {
			if _, ok := m["emptyDir"]; ok && m["emptyDir"] != nil {
				return true
			}
		}
	}
	return false
}

// staticPodManifest says whether a manifest's Pod is a static pod's (see above).
func staticPodManifest(obj map[string]any, ref inventory.ObjectRef) bool {
	if ref.Namespace != "" && ref.Namespace != "kube-system" {
		return false
	}
	if str(obj, "metadata", "labels", "tier") == "control-plane" {
		return true
	}
	podLabels := stringMap(at(obj, "metadata", "labels"))
	for _, c := range listAt(obj, "spec", "containers") {
		if name, _ := componentOf(mapAt(c), podLabels); name != "" && name != "kube-proxy" {
			return true
		}
	}
	return false
}
