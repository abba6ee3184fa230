package convert

import yaml "go.yaml.in/yaml/v3"

// FlowSchema and PriorityLevelConfiguration of flowcontrol.apiserver.k8s.io, as
// pkg/apis/flowcontrol/{v1beta1,v1beta2,v1beta3}/{conversion,defaults}.go convert them:
// v1beta1 and v1beta2 name the seats of a limited priority level assuredConcurrencyShares,
// v1beta3 and v1 nominalConcurrencyShares. The versions differ in what 0 means: v1beta1 to
// v1beta3 default 0 to 30 (v1beta3 keeps 0 only when the server's round-trip annotation is
// set), v1 defaults only an absent field and takes 0 literally (no nominal seats, the level
// runs on borrowed ones). FlowSchema has the same fields in every version.

const (
	flowcontrolV1beta1 = "flowcontrol.apiserver.k8s.io/v1beta1/"
	flowcontrolV1beta2 = "flowcontrol.apiserver.k8s.io/v1beta2/"
	flowcontrolV1beta3 = "flowcontrol.apiserver.k8s.io/v1beta3/"
	flowcontrolV1      = "flowcontrol.apiserver.k8s.io/v1/"

	// preserveZeroShares is the annotation a v1beta3 server writes to keep a 0 it read from
	// v1 (k8s.io/api/flowcontrol/v1beta3.PriorityLevelPreserveZeroConcurrencySharesKey).
	preserveZeroShares = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"

	// defaultConcurrencyShares is every version's default for a limited level's shares.
	defaultConcurrencyShares = 30
)

func init() {
	for _, old := range []string{flowcontrolV1beta1, flowcontrolV1beta2} {
		register(old+"FlowSchema", flowcontrolV1beta3+"FlowSchema", identical)
		register(old+"PriorityLevelConfiguration", flowcontrolV1beta3+"PriorityLevelConfiguration", assuredToNominalShares)
	}
	register(flowcontrolV1beta3+"FlowSchema", flowcontrolV1+"FlowSchema", identical)
	register(flowcontrolV1beta3+"PriorityLevelConfiguration", flowcontrolV1+"PriorityLevelConfiguration", zeroSharesToV1)
}

// assuredToNominalShares renames assuredConcurrencyShares. v1beta1 and v1beta2 ignore the
// round-trip annotation, v1beta3 honours it, so a stray one is dropped, and an explicit 0
// (which these versions default to 30) is written as 30.
func assuredToNominalShares(s *State) {
	limited := getPath(s.Obj, "spec", "limited")
	rename(limited, "assuredConcurrencyShares", "nominalConcurrencyShares")
	if k := dropPreserveZeroAnnotation(s); k != nil {
		s.Note("/metadata/annotations/"+escapePointer(preserveZeroShares), k,
			"%s dropped: %s ignores it, %s would keep a 0 share count because of it", preserveZeroShares, s.From.Version, s.To.Version)
	}
	if v := get(limited, "nominalConcurrencyShares"); isIntValue(v, 0) {
		set(limited, "nominalConcurrencyShares", integer(defaultConcurrencyShares))
		s.Note("/spec/limited/nominalConcurrencyShares", v,
			"assuredConcurrencyShares: 0 means the default in %s: written as %d", s.From.Version, defaultConcurrencyShares)
	}
}

// zeroSharesToV1 keeps the number of seats a v1beta3 level gets: 0 without the round-trip
// annotation means 30 in v1beta3 and must be written as 30, since v1 takes it literally; with
// the annotation, an absent or 0 value means 0 and must be written as 0, since v1 defaults an
// absent one to 30. The annotation itself is dropped, as the server's conversion does.
func zeroSharesToV1(s *State) {
	limited := getPath(s.Obj, "spec", "limited")
	shares := get(limited, "nominalConcurrencyShares")
	k := dropPreserveZeroAnnotation(s)
	keepZero := k != nil
	if keepZero {
		s.Note("/metadata/annotations/"+escapePointer(preserveZeroShares), k,
			"%s dropped, as the API server's conversion to v1 does", preserveZeroShares)
	}
	switch {
	case limited == nil:
	case keepZero && (isNull(shares) || isIntValue(shares, 0)):
		set(limited, "nominalConcurrencyShares", integer(0))
		s.Note("/spec/limited/nominalConcurrencyShares", shares,
			"nominalConcurrencyShares written as 0: v1beta3 kept 0 because of %s, v1 would default an absent value to %d", preserveZeroShares, defaultConcurrencyShares)
	case isIntValue(shares, 0):
		set(limited, "nominalConcurrencyShares", integer(defaultConcurrencyShares))
		s.Note("/spec/limited/nominalConcurrencyShares", shares,
			"nominalConcurrencyShares: 0 means the default (%d) in v1beta3 but no nominal seats in v1: written as %d", defaultConcurrencyShares, defaultConcurrencyShares)
	}
}

// dropPreserveZeroAnnotation removes the round-trip annotation and returns its key node (for
// the line a remark names), or nil when it was not set.
func dropPreserveZeroAnnotation(s *State) *yaml.Node {
	annotations := getPath(s.Obj, "metadata", "annotations")
	k := keyNode(annotations, preserveZeroShares)
	if del(annotations, preserveZeroShares) == nil {
		return nil
	}
	if len(annotations.Content) == 0 {
		del(get(s.Obj, "metadata"), "annotations")
	}
	return k
}
