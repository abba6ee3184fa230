package convert

import (
	"math"

	yaml "go.yaml.in/yaml/v3"
)

// Workloads of apps/v1beta1, apps/v1beta2 and extensions/v1beta1 have apps/v1's fields, save
// a few the older versions alone had; where they defaulted a field otherwise, apps/v1 would
// change how the workload rolls out, so the old default is written out.
func init() {
	for _, kind := range []string{"Deployment", "DaemonSet", "ReplicaSet", "StatefulSet", "ControllerRevision"} {
		// apps/v1beta2 has apps/v1's fields and defaults (pkg/apis/apps/v1beta2/defaults.go).
		register("apps/v1beta2/"+kind, "apps/v1/"+kind, identical)
	}
	register("apps/v1beta1/ControllerRevision", "apps/v1/ControllerRevision", identical)
	register("apps/v1beta1/Deployment", "apps/v1/Deployment", workload(deploymentV1beta1))
	register("apps/v1beta1/StatefulSet", "apps/v1/StatefulSet", workload(statefulSetV1beta1))
	register("extensions/v1beta1/Deployment", "apps/v1/Deployment", workload(deploymentExtensions))
	register("extensions/v1beta1/DaemonSet", "apps/v1/DaemonSet", workload(daemonSetExtensions))
	register("extensions/v1beta1/ReplicaSet", "apps/v1/ReplicaSet", workload(func(*State) {}))
}

// workload converts a workload of a version that defaulted the selector (and the object's
// labels) from the pod template's labels, which apps/v1 does not, then runs kind's own step.
func workload(kind Step) Step {
	return func(s *State) {
		selectorFromTemplate(s)
		kind(s)
	}
}

// selectorFromTemplate writes out the selector and labels the old version defaulted from
// spec.template.metadata.labels: apps/v1 requires a selector and copies no labels.
func selectorFromTemplate(s *State) {
	spec := get(s.Obj, "spec")
	labels := getPath(spec, "template", "metadata", "labels")
	if labels == nil || labels.Kind != yaml.MappingNode {
		return
	}
	if isNull(get(spec, "selector")) {
		setBefore(spec, "template", "selector", mapping("matchLabels", deepCopy(labels)))
		s.Note("/spec/selector", keyNode(spec, "template"),
			"%s defaulted the selector to the pod template's labels; apps/v1 requires it, so it is written out", s.From.APIVersion())
	}
	md := get(s.Obj, "metadata")
	if isEmpty(get(md, "labels")) && md != nil {
		setAfter(md, "namespace", "labels", deepCopy(labels))
		s.Note("/metadata/labels", keyNode(s.Obj, "metadata"),
			"%s gave an object without labels its pod template's labels; they are written out", s.From.APIVersion())
	}
}

// rollbackTo is a one-off rollback request apps/v1 has no field for (`kubectl rollout undo`
// replaces it): whether it still matters is the owner's call.
func rollbackTo(s *State) {
	spec := get(s.Obj, "spec")
	if k := keyNode(spec, "rollbackTo"); k != nil {
		s.Manual("/spec/rollbackTo", k, "apps/v1 has no spec.rollbackTo: delete it, and roll back with `kubectl rollout undo` if the rollback is still wanted")
	}
}

// keepDefault writes value at spec.key when the object does not set it, because the old
// version defaulted it so and apps/v1 defaults it otherwise.
func keepDefault(s *State, m *yaml.Node, path, key, after string, value *yaml.Node, newDefault string) {
	if m == nil || m.Kind != yaml.MappingNode || !isNull(get(m, key)) {
		return
	}
	if get(m, after) == nil && get(m, "template") != nil {
		setBefore(m, "selector", key, value) // above the selector and template, with the counts
		if get(m, "selector") == nil {
			setBefore(m, "template", key, value)
		}
	} else {
		setAfter(m, after, key, value)
	}
	s.Note(path+"/"+key, firstWritten(m, keyNode(s.Obj, "spec")), "%s defaulted %s to %s and apps/v1 defaults it to %s: the old default is written out so the workload behaves as before; delete the line to take the new default",
		s.From.APIVersion(), key, value.Value, newDefault)
}

func deploymentV1beta1(s *State) {
	rollbackTo(s)
	spec := get(s.Obj, "spec")
	keepDefault(s, spec, "/spec", "revisionHistoryLimit", "replicas", integer(2), "10")
}

func deploymentExtensions(s *State) {
	rollbackTo(s)
	spec := get(s.Obj, "spec")
	keepDefault(s, spec, "/spec", "revisionHistoryLimit", "replicas", integer(math.MaxInt32), "10")
	keepDefault(s, spec, "/spec", "progressDeadlineSeconds", "revisionHistoryLimit", integer(math.MaxInt32), "600")
	strategy := get(spec, "strategy")
	typ := scalarAt(strategy, "type")
	// extensions/v1beta1 fills rollingUpdate in for a RollingUpdate strategy, or any strategy
	// that has one (SetDefaults_Deployment).
	if typ != "" && typ != "RollingUpdate" && isNull(get(strategy, "rollingUpdate")) {
		return
	}
	if isNull(strategy) {
		// A new strategy reads best above the template, where charts put it.
		strategy = mapping()
		setBefore(spec, "template", "strategy", strategy)
	}
	ru := ensureMap(strategy, "type", "rollingUpdate")
	if ru == nil {
		return // not a mapping: the API server refuses the object as it is
	}
	keepDefault(s, ru, "/spec/strategy/rollingUpdate", "maxUnavailable", "", integer(1), "25%")
	keepDefault(s, ru, "/spec/strategy/rollingUpdate", "maxSurge", "maxUnavailable", integer(1), "25%")
}

func daemonSetExtensions(s *State) {
	spec := get(s.Obj, "spec")
	if g := del(spec, "templateGeneration"); !isNull(g) {
		ann := ensureMap(ensureMap(s.Obj, "kind", "metadata"), "labels", "annotations")
		v := str(g.Value)
		v.Style = yaml.DoubleQuotedStyle
		set(ann, "deprecated.daemonset.template.generation", v)
		s.Note("/metadata/annotations/deprecated.daemonset.template.generation", g,
			"apps/v1 has no spec.templateGeneration: the API server keeps it in this annotation, and so does the conversion")
	}
	// Also beside a rollingUpdate: a DaemonSet's OnDelete accepts one (unlike a StatefulSet's),
	// and without the type apps/v1 would roll pods out with it.
	keepOnDelete(s, spec)
}

func statefulSetV1beta1(s *State) { keepOnDelete(s, get(s.Obj, "spec")) }

// keepOnDelete writes the update strategy type the old version defaulted, OnDelete, where
// the object sets none: apps/v1 defaults RollingUpdate.
func keepOnDelete(s *State, spec *yaml.Node) {
	if spec == nil || spec.Kind != yaml.MappingNode {
		return
	}
	us := get(spec, "updateStrategy")
	if isNull(us) {
		us = mapping()
		setBefore(spec, "template", "updateStrategy", us)
	}
	if us.Kind != yaml.MappingNode || !isNull(get(us, "type")) {
		return
	}
	setAfter(us, "", "type", str("OnDelete"))
	s.Note("/spec/updateStrategy/type", spec, "%s defaulted updateStrategy to OnDelete and apps/v1 defaults it to RollingUpdate: OnDelete is written out so pods are replaced only when deleted, as before; delete it to take the new default", s.From.APIVersion())
}
