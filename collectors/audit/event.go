package audit

// Event is the part of an audit.k8s.io/v1 Event the aggregation reads, under the upstream
// field names (k8s.io/apiserver/pkg/apis/audit/v1). Every shape read (upstream lines and
// EventLists, the managed providers' exports) is turned into one of these.
type Event struct {
	Stage     string           `json:"stage"`
	Verb      string           `json:"verb"`
	User      UserInfo         `json:"user"`
	SourceIPs []string         `json:"sourceIPs"`
	UserAgent string           `json:"userAgent"`
	ObjectRef *ObjectReference `json:"objectRef"`
	// StageTimestamp is RFC 3339 with microseconds, as the API server writes it.
	StageTimestamp string            `json:"stageTimestamp"`
	Annotations    map[string]string `json:"annotations"`
}

// The annotations the API server sets on a request to a deprecated API.
const (
	AnnotationDeprecated     = "k8s.io/deprecated"
	AnnotationRemovedRelease = "k8s.io/removed-release"
)

// UserInfo is who made the request.
type UserInfo struct {
	Username string `json:"username"`
}

// ObjectReference is what the request was to.
type ObjectReference struct {
	Resource    string `json:"resource"`
	APIGroup    string `json:"apiGroup"`
	APIVersion  string `json:"apiVersion"`
	Subresource string `json:"subresource"`
}
