package inventory

import "sort"

// Bounds of one probe's observation.
const (
	// MaxProbes bounds how many probes a document observes: the knowledge base's (60) and
	// every custom pack's together. What they match is bounded by work, not by count
	// (probe.MaxCollectionSteps), so room for custom packs costs no worst case.
	MaxProbes = 200
	// MaxProbeValues is how many distinct values an observation lists, the first in sort
	// order (whatever order objects were read in); occurrences of the others are counted in
	// ValuesOmitted.
	MaxProbeValues = 100
	// MaxObjectValues is how many distinct values one object reference lists.
	MaxObjectValues = 10
)

// ProbeSpec is a probe as a bundle declares it: the objects to look at, the field path and
// what to record. The probe package reads and validates it; the document keeps it beside what
// was observed, so a judge can tell an observation of the probe it knows from one of an older
// declaration.
type ProbeSpec struct {
	// ID names the probe within its bundle.
	ID string `json:"id"`
	// Kinds are "<group>/<Kind>" keys ("core/Service"), any version of each.
	Kinds []string `json:"kinds,omitempty"`
	// PodTemplate looks at the pod template of every workload; Path is relative to it.
	PodTemplate bool   `json:"podTemplate,omitempty"`
	Path        string `json:"path"`
	// Match is "present" or "absent".
	Match string `json:"match,omitempty"`
	// Values keeps the distinct values found, or where the path fell short.
	Values bool `json:"values,omitempty"`
	// Equals and Prefixes narrow a present-mode probe to the values it is about: a value
	// counts when it is one of Equals or starts with one of Prefixes. Unless spares an object
	// holding any value in it (the replacement it already relies on). The collector applies
	// them to every value of every object, so counts are exact whatever the lists' bounds.
	Equals   []string `json:"equals,omitempty"`
	Prefixes []string `json:"prefixes,omitempty"`
	Unless   []string `json:"unless,omitempty"`
	// StrictInvalid narrows a present-mode probe to the values of an IP ("ip") or CIDR
	// ("cidr") field that Kubernetes' legacy validation accepts and its strict validation
	// (the StrictIPCIDRValidation feature, KEP-4858) refuses: IPv4 octets or prefix lengths
	// with leading zeros, IPv4-mapped IPv6 addresses, CIDRs with bits set past the prefix
	// length. The collector applies it to every value, as it does Equals.
	StrictInvalid string `json:"strictInvalid,omitempty"`
}

// Probe is what collectors observed for one probe: observations only, never a verdict.
type Probe struct {
	// ID is the probe's qualified id: "kb/<id>" for the knowledge base's, "custom/<pack>/<id>"
	// for a custom pack's.
	ID    string    `json:"id"`
	Probe ProbeSpec `json:"probe"`
	// Available is false when the collector could not look at every object of the probe's
	// kinds (a forbidden list, a timeout); Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Examined counts the objects looked at; Count those the probe matched.
	Examined       int           `json:"examined"`
	Count          int           `json:"count"`
	Objects        []ProbeObject `json:"objects,omitempty"`
	ObjectsOmitted int           `json:"objectsOmitted,omitempty"`
	Values         []ProbeValue  `json:"values,omitempty"`
	ValuesOmitted  int           `json:"valuesOmitted,omitempty"`
}

// ProbeObject is one matched object, with its kind (a probe may look at several) and, when
// the probe keeps values, what it found in this object.
type ProbeObject struct {
	Group        string   `json:"group,omitempty"`
	Kind         string   `json:"kind"`
	Namespace    string   `json:"namespace,omitempty"`
	Name         string   `json:"name"`
	File         string   `json:"file,omitempty"`
	Line         int      `json:"line,omitempty"`
	RenderedFrom string   `json:"renderedFrom,omitempty"`
	Values       []string `json:"values,omitempty"`
	// Ignore is the object's own suppression annotation, when it has one.
	Ignore *IgnoreAnnotation `json:"ignore,omitempty"`
}

// ProbeValue is one distinct value with the number of matched objects it was found in.
type ProbeValue struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// SortProbes orders observations by id, the order documents keep.
func SortProbes(ps []Probe) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
}
