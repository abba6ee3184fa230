package inventory

// Who calls deprecated APIs, from the API server's audit events: an audit log read by the
// collector (--audit-log) or batches the server receives from the audit webhook backend.
// The API server annotates each audited request to a deprecated API with
// k8s.io/deprecated: "true" (and k8s.io/removed-release when a removal is announced); the
// collector aggregates those requests per caller. The rules in policies/rules/.../calls
// judge them.

// CapAuditLog: the API server's audit events (a log read with --audit-log, or the webhook
// backend's batches on the server). Optional: most scans have none.
const CapAuditLog = "audit-log"

// Times in the section (Since, FirstSeen, LastSeen) are RFC 3339 in UTC to the second
// (AuditTime), so that they compare as strings and decode with the rest of the document.
const AuditTime = "2006-01-02T15:04:05Z"

// Bounds of the audit section. Memory while reading is bounded by MaxAuditTracked; the
// section lists the busiest MaxAuditCallers callers and counts the rest, per API, in
// Omitted.
const (
	// MaxAuditTracked is how many distinct callers one reading keeps counts for. A caller
	// first seen past it is counted only in its API's Omitted row.
	MaxAuditTracked = 10000
	// MaxAuditCallers is how many callers the section lists, busiest first.
	MaxAuditCallers = 1000
	// MaxAuditAPIs bounds the Omitted rows: one per API.
	MaxAuditAPIs = 1000
	// MaxAuditRanges is how many source address ranges one caller lists.
	MaxAuditRanges = 10
	// MaxAuditSources is how many files the section lists.
	MaxAuditSources = 1000
	// MaxAuditMalformed is how many malformed lines the section names (the rest are
	// counted).
	MaxAuditMalformed = 10
	// MaxKubectlVersions is how many kubectl versions the section lists, and MaxKubectlUsers
	// how many users one version names.
	MaxKubectlVersions = 100
	MaxKubectlUsers    = 10
)

// AuditCalls is what audit events say about the calls to deprecated APIs and the kubectl
// versions in use.
type AuditCalls struct {
	// Since is the start of the window (--audit-since before the collection): a caller last
	// seen before it has stopped calling, as far as the log tells.
	Since string `json:"since"`
	// Events counts the events read, Requests those that finished a request (stage
	// ResponseComplete or Panic, the stages counted: the other stages repeat a request),
	// and DeprecatedRequests those to a deprecated API.
	Events             int64 `json:"events"`
	Requests           int64 `json:"requests"`
	DeprecatedRequests int64 `json:"deprecatedRequests"`
	// OwnReads counts the DeprecatedRequests that were upgradescope's own reads (get, list
	// or watch with an "upgradescope/" user agent): a scan reads every served version of a
	// kind, and would otherwise be a caller of the deprecated APIs it reports, the last one
	// once the user's clients have moved. They are no caller. A client claiming that user
	// agent hides its reads here, but not from the API server's metric.
	OwnReads int64 `json:"ownReads,omitempty"`
	// Malformed counts the lines that were not an audit event; MalformedAt names the first
	// MaxAuditMalformed ("file:line: reason").
	Malformed   int64    `json:"malformed,omitempty"`
	MalformedAt []string `json:"malformedAt,omitempty"`
	// Sources are the files read, in reading order.
	Sources        []AuditSource `json:"sources,omitempty"`
	SourcesOmitted int           `json:"sourcesOmitted,omitempty"`
	// Callers are the callers of deprecated APIs, busiest first.
	Callers []AuditCaller `json:"callers,omitempty"`
	// Omitted counts, per API, the callers and calls past Callers (past MaxAuditCallers
	// listed, or past MaxAuditTracked kept while reading).
	Omitted []AuditOmitted `json:"omitted,omitempty"`
	// OmittedAPIs counts the calls at APIs past MaxAuditAPIs Omitted rows.
	OmittedAPIs int64 `json:"omittedApis,omitempty"`
	// Kubectl are the kubectl versions in user agents of every request read.
	Kubectl        []KubectlClient `json:"kubectl,omitempty"`
	KubectlOmitted int64           `json:"kubectlOmitted,omitempty"`
}

// AuditSource is one file read (or "-" for standard input, "webhook" for the server).
type AuditSource struct {
	Path      string `json:"path"`
	Format    string `json:"format,omitempty"`
	Events    int64  `json:"events"`
	Malformed int64  `json:"malformed,omitempty"`
}

// AuditCaller is one caller of one deprecated API: the requests of one verb by one user
// with one user agent, from the address ranges listed.
type AuditCaller struct {
	Group       string `json:"group"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	// Verb is at most 64 characters, User and UserAgent at most 1,024: they are cut while
	// reading, so that a hostile log cannot make the kept callers large. The API's fields
	// are as an API server writes them (a DNS subdomain, DNS labels); an event whose are not
	// is counted as malformed.
	Verb string `json:"verb"`
	User string `json:"user"`
	// ServiceAccount is "namespace/name" when User is a service account.
	ServiceAccount string `json:"serviceAccount,omitempty"`
	UserAgent      string `json:"userAgent"`
	// SourceRanges are the client addresses as /24 (IPv4) and /64 (IPv6) ranges.
	SourceRanges        []string `json:"sourceRanges,omitempty"`
	SourceRangesOmitted int      `json:"sourceRangesOmitted,omitempty"`
	// RemovedRelease is the k8s.io/removed-release annotation ("1.22"), when the API server
	// gave one.
	RemovedRelease string `json:"removedRelease,omitempty"`
	Count          int64  `json:"count"`
	FirstSeen      string `json:"firstSeen"`
	LastSeen       string `json:"lastSeen"`
}

// AuditOmitted counts the callers of one API past those listed.
type AuditOmitted struct {
	Group       string `json:"group"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	// Callers counts the distinct callers left out that were kept while reading; Calls
	// counts every call left out, including those of callers past MaxAuditTracked.
	Callers        int64  `json:"callers"`
	Calls          int64  `json:"calls"`
	RemovedRelease string `json:"removedRelease,omitempty"`
	LastSeen       string `json:"lastSeen"`
}

// KubectlClient is one kubectl version seen in user agents ("kubectl/v1.28.2 …").
type KubectlClient struct {
	Version      string   `json:"version"`
	Count        int64    `json:"count"`
	Users        []string `json:"users,omitempty"`
	UsersOmitted int      `json:"usersOmitted,omitempty"`
	LastSeen     string   `json:"lastSeen"`
}
