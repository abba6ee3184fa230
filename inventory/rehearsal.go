package inventory

// Rehearsal: what a throwaway API server of the target said when the collected objects were
// replayed into it (upgradescope rehearse). Collectors record each refusal with the server's
// own words and where the object came from; the rules in policies/rules/.../rehearsal judge.

const (
	// CapRehearsal: every collected object was replayed into an API server of the target
	// (upgradescope rehearse); required whenever the inventory holds a rehearsal. Partial when
	// some could not be (no conversion, a CRD missing, a time bound): those are NotReplayed,
	// and the verdict is unknown.
	CapRehearsal = "rehearsal"
)

// Bounds of the rehearsal section.
const (
	// MaxRehearsalItems bounds Rejections and NotReplayed; past it they are counted in the
	// lists' Omitted fields.
	MaxRehearsalItems = 1000
	// MaxRehearsalMessage bounds one API server message, in bytes.
	MaxRehearsalMessage = 2048
)

// Rehearsal is one replay of the collected objects into an API server of Target.
type Rehearsal struct {
	// Target is the minor the server that judged the objects serves ("1.35").
	Target string `json:"target"`
	// ServerVersion is that server's gitVersion ("v1.35.4"), as /version reported it.
	ServerVersion string `json:"serverVersion"`
	// Server says how it was reached: "kube-binaries" (started for the rehearsal and stopped
	// after) or "kubeconfig" (an existing test cluster).
	Server string `json:"server"`
	// Objects is how many objects were collected for the replay; Accepted how many the server
	// accepted (server-side apply with dryRun=All).
	Objects  int `json:"objects"`
	Accepted int `json:"accepted"`
	// Converted counts the objects replayed at the version `fix` converted them to.
	Converted          int               `json:"converted,omitempty"`
	Rejections         []RehearsalObject `json:"rejections,omitempty"`
	RejectionsOmitted  int               `json:"rejectionsOmitted,omitempty"`
	NotReplayed        []RehearsalObject `json:"notReplayed,omitempty"`
	NotReplayedOmitted int               `json:"notReplayedOmitted,omitempty"`
}

// RehearsalObject is one object the server refused, or that could not be replayed.
type RehearsalObject struct {
	// APIVersion and Kind are what was sent (after conversion); OriginalAPIVersion is what the
	// source wrote, when conversion changed it.
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	OriginalAPIVersion string `json:"originalApiVersion,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	Name               string `json:"name"`
	// Source is where the object came from.
	Source RehearsalSource `json:"source"`
	// Reason is the API server's status reason (Invalid, Forbidden, AlreadyExists, …) for a
	// rejection, or why the object was not replayed ("no conversion", "crd missing",
	// "timeout", "bound").
	Reason string `json:"reason"`
	// Message is the API server's message, or the explanation of a skip, cut to
	// MaxRehearsalMessage.
	Message string `json:"message"`
	// FieldManager is the manager the object was applied as.
	FieldManager string `json:"fieldManager,omitempty"`
}

// RehearsalSource says where a replayed object came from: a file and line, a Helm release, an
// Argo CD application, or the live cluster.
type RehearsalSource struct {
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	HelmRelease string `json:"helmRelease,omitempty"` // namespace/name
	Application string `json:"application,omitempty"` // Argo CD: namespace/name
	Live        bool   `json:"live,omitempty"`
}
