package rehearsal

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// createCRDs creates the CRDs among the objects for real, each the server does not have yet,
// and waits until they are Established so their custom resources map; a CRD the server
// already has (a test cluster's) is applied with dryRun=All like any object.
func (r *replayer) createCRDs(ctx context.Context, crds []*item) {
	var created []string
	for _, it := range crds {
		it.mapping = rootMapping(crdsGVR, it.obj.GroupVersionKind())
		if ok := r.ensure(ctx, it, crdsGVR); ok {
			created = append(created, it.obj.GetName())
		}
	}
	for _, name := range created {
		r.waitEstablished(ctx, name)
	}
}

// createNamespaces creates every namespace the objects need that the server lacks, as the
// Namespace object of the set when there is one, and notes why one could not be created: the
// objects in it are then not replayed.
func (r *replayer) createNamespaces(ctx context.Context, nsItems, rest []*item) {
	byName := map[string]*item{}
	for _, it := range nsItems {
		it.mapping = rootMapping(namespacesGVR, it.obj.GroupVersionKind())
		if _, dup := byName[it.obj.GetName()]; dup {
			r.dryRun(ctx, it) // a second copy is judged as itself
			continue
		}
		byName[it.obj.GetName()] = it
	}
	for _, it := range rest {
		if ns := it.obj.GetNamespace(); ns != "" && byName[ns] == nil {
			bare := &unstructured.Unstructured{}
			bare.SetAPIVersion("v1")
			bare.SetKind("Namespace")
			bare.SetName(ns)
			byName[ns] = &item{obj: bare, mapping: rootMapping(namespacesGVR, bare.GroupVersionKind())}
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r.ensure(ctx, byName[name], namespacesGVR)
	}
}

// ensure makes it exist on the server: applied with dryRun=All when the server has it, else
// created for real (labelled on a test cluster, and noted for Close to delete). A bare
// namespace (no source object) is not counted as an object of the set. It says whether it
// created it.
func (r *replayer) ensure(ctx context.Context, it *item, gvr schema.GroupVersionResource) bool {
	name := it.obj.GetName()
	fromSet := it.src.Obj != nil
	_, err := r.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		err = r.create(ctx, it, gvr)
		if err == nil {
			if fromSet {
				r.answer(it, nil)
			}
			if r.s.created != nil {
				r.s.created.add(gvr, name)
			}
			return true
		}
	}
	// Someone else's: there before the check, or created by another between the check and
	// the create (AlreadyExists). It is judged as an update and never deleted.
	if err == nil || apierrors.IsAlreadyExists(err) {
		if fromSet {
			r.dryRun(ctx, it)
		}
		return false
	}
	if fromSet {
		r.answer(it, err)
	}
	if gvr == namespacesGVR {
		r.mu.Lock()
		r.missingNamespaces[name] = fmt.Sprintf("namespace %s could not be created on the rehearsal's API server: %s", name, err)
		r.mu.Unlock()
	}
	return false
}

// create creates it for real, on a test cluster labelled RehearsalLabel. A plain create, not
// a forced apply: one that exists by now fails AlreadyExists instead of being taken over.
func (r *replayer) create(ctx context.Context, it *item, gvr schema.GroupVersionResource) error {
	obj := it.obj
	if r.s.created != nil {
		obj = obj.DeepCopy()
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[RehearsalLabel] = "true"
		obj.SetLabels(labels)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	_, err := r.dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager(it.src)})
	return err
}

// podClasses are what admission looks up when a Pod is created: the Priority plugin its
// priorityClassName's PriorityClass, the RuntimeClass plugin its runtimeClassName's. A dry
// run of them leaves nothing to look up, so a bare Pod naming one was refused ("no
// PriorityClass with name … was found") where the target, which has the class, accepts it.
var podClasses = map[schema.GroupKind]bool{
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:        true,
}

func isPodClass(it *item) bool { return podClasses[it.obj.GroupVersionKind().GroupKind()] }

// createPodClasses creates the pod classes among the objects for real, each the server lacks
// (on a test cluster labelled, and deleted by Close), before the Pods that name them.
func (r *replayer) createPodClasses(ctx context.Context, classes []*item) {
	for _, it := range classes {
		r.ensure(ctx, it, it.mapping.Resource)
	}
}

func (r *replayer) missingNamespace(ns string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	why, ok := r.missingNamespaces[ns]
	return why, ok
}

// waitEstablished polls a created CRD until its Established condition is True, for up to 30
// seconds within the replay's time; one that never is leaves its custom resources unmapped
// ("crd missing").
func (r *replayer) waitEstablished(ctx context.Context, name string) {
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := r.dyn.Resource(crdsGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not visible yet
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

func rootMapping(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) *meta.RESTMapping {
	return &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvk, Scope: meta.RESTScopeRoot}
}
