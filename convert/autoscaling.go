package convert

import (
	yaml "go.yaml.in/yaml/v3"
)

// HorizontalPodAutoscalers of autoscaling/v2beta1 and v2beta2 move to autoscaling/v2, which
// defaults as both did (minReplicas 1, CPU at 80% without metrics, v2beta2's behavior rules).
// v2beta1 wrote each metric's target in fields of its own; v2 nests a metric identifier and a
// target with a type, as pkg/apis/autoscaling/v2beta1/conversion.go builds them.
func init() {
	register("autoscaling/v2beta1/HorizontalPodAutoscaler", "autoscaling/v2/HorizontalPodAutoscaler", hpaV2beta1)
	register("autoscaling/v2beta2/HorizontalPodAutoscaler", "autoscaling/v2/HorizontalPodAutoscaler", roundTripAnnotations)
}

// roundTripAnnotations are the annotations the API server writes to carry v2 fields through
// older versions and drops when it reads an object; in a manifest they hold settings a person
// must move into fields.
func roundTripAnnotations(s *State) {
	ann := getPath(s.Obj, "metadata", "annotations")
	for _, a := range []string{
		"autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/behavior",
		"autoscaling.alpha.kubernetes.io/scale-down-tolerance", "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
		"autoscaling.alpha.kubernetes.io/current-metrics", "autoscaling.alpha.kubernetes.io/conditions",
	} {
		if k := keyNode(ann, a); k != nil {
			s.Manual("/metadata/annotations/"+a, k, "the API server drops the annotation %s, which carries autoscaling/v2 fields through older versions: move what it says into spec (metrics, behavior) and delete it", a)
		}
	}
}

func hpaV2beta1(s *State) {
	roundTripAnnotations(s)
	each(getPath(s.Obj, "spec", "metrics"), func(_ int, m *yaml.Node) {
		switch scalarAt(m, "type") {
		case "Resource":
			resourceMetric(get(m, "resource"))
		case "ContainerResource":
			src := get(m, "containerResource")
			resourceMetric(src)
			if k := keyNode(src, "container"); k != nil {
				s.Note("/spec/metrics", k, "the API server's v2beta1 conversion drops containerResource.container (Convert_v2beta1_ContainerResourceMetricSource_To_autoscaling_ContainerResourceMetricSource copies only name and target), then rejects the metric for want of it: the container is kept")
			}
		case "Pods":
			podsMetric(get(m, "pods"))
		case "Object":
			objectMetric(get(m, "object"))
		case "External":
			externalMetric(get(m, "external"))
		}
	})
}

// resourceMetric: a utilization target when targetAverageUtilization is set, else an average
// value.
func resourceMetric(src *yaml.Node) {
	util, avg := take(src, "targetAverageUtilization"), take(src, "targetAverageValue")
	if src == nil {
		return
	}
	t := mapping("type", str("AverageValue"))
	if util != nil {
		t = mapping("type", str("Utilization"))
	}
	if avg != nil {
		set(t, "averageValue", avg)
	}
	if util != nil {
		set(t, "averageUtilization", util)
	}
	set(src, "target", t)
}

// podsMetric: always an average value.
func podsMetric(src *yaml.Node) {
	if src == nil {
		return
	}
	metric := metricIdentifier(src, "metricName", "selector")
	t := mapping("type", str("AverageValue"))
	if avg := take(src, "targetAverageValue"); avg != nil {
		set(t, "averageValue", avg)
	}
	setFirst(src, "metric", metric)
	set(src, "target", t)
}

// objectMetric: target (the object) becomes describedObject; a value target unless
// averageValue is set, and the value is kept beside an average as the server keeps it.
func objectMetric(src *yaml.Node) {
	if src == nil {
		return
	}
	rename(src, "target", "describedObject")
	metric := metricIdentifier(src, "metricName", "selector")
	value, avg := take(src, "targetValue"), take(src, "averageValue")
	t := mapping("type", str("Value"))
	if avg != nil {
		t = mapping("type", str("AverageValue"))
	}
	if value == nil {
		value = str("0") // v2beta1's targetValue is not a pointer: unset reads as 0
	}
	set(t, "value", value)
	if avg != nil {
		set(t, "averageValue", avg)
	}
	setFirst(src, "metric", metric)
	set(src, "target", t)
}

// externalMetric: a value target when targetValue is set, else an average value.
func externalMetric(src *yaml.Node) {
	if src == nil {
		return
	}
	metric := metricIdentifier(src, "metricName", "metricSelector")
	value, avg := take(src, "targetValue"), take(src, "targetAverageValue")
	t := mapping("type", str("AverageValue"))
	if value != nil {
		t = mapping("type", str("Value"), "value", value)
	}
	if avg != nil {
		set(t, "averageValue", avg)
	}
	setFirst(src, "metric", metric)
	set(src, "target", t)
}

// metricIdentifier takes the name and selector fields out of src as a v2 metric identifier.
func metricIdentifier(src *yaml.Node, nameKey, selectorKey string) *yaml.Node {
	m := mapping()
	if n := del(src, nameKey); n != nil {
		set(m, "name", n)
	}
	if sel := del(src, selectorKey); sel != nil {
		set(m, "selector", sel)
	}
	return m
}

// take removes key from src and returns its value, or nil when it was absent or null: the API
// server reads a null target as an unset one, which chooses the target's type.
func take(src *yaml.Node, key string) *yaml.Node {
	if v := del(src, key); !isNull(v) {
		return v
	}
	return nil
}
