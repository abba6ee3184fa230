package report

import "github.com/upgradescope/upgradescope/inventory"

// SchemaVersion is the version of the JSON report contract (docs/report.schema.json).
const SchemaVersion = 1

// Verdicts of a target.
const (
	VerdictReady   = "ready"
	VerdictBlocked = "blocked"
	VerdictUnknown = "unknown"
)

// Severities of a finding.
const (
	SeverityBlocker = "blocker"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Report is what one evaluation of one inventory produced.
type Report struct {
	SchemaVersion int    `json:"schemaVersion"`
	ToolVersion   string `json:"toolVersion"`
	EvaluatedAt   string `json:"evaluatedAt"`
	Source        string `json:"source"`
	ClusterID     string `json:"clusterId,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	FilesBase     string `json:"filesBase,omitempty"`
	// FilesExcluded are the paths under FilesBase an exclusion pattern left unread (the
	// inventory's list, as it is), FilesExcludedOmitted those past its bound.
	FilesExcluded        []inventory.ExcludedPath `json:"filesExcluded,omitempty"`
	FilesExcludedOmitted int                      `json:"filesExcludedOmitted,omitempty"`
	// KubeContext and APIServer (scheme, host and port; never credentials) name the live
	// cluster a scan read; the CLI sets them.
	KubeContext string         `json:"kubeContext,omitempty"`
	APIServer   string         `json:"apiServer,omitempty"`
	Bundles     []BundleInfo   `json:"bundles"`
	KB          KBMeta         `json:"kb"`
	Targets     []TargetResult `json:"targets"`
	// Plan is set by WithPlan: one hop per minor; Targets holds every hop's judgement and
	// the verdict that gates is the last one's.
	Plan           []Hop        `json:"plan,omitempty"`
	ExpiredIgnores []IgnoreRule `json:"expiredIgnores,omitempty"`
}

// Hop is one minor of an upgrade plan: the keys of findings that first appear there, whose
// severity changed since the previous hop, and that the previous hop had and this one has not.
type Hop struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Verdict  string   `json:"verdict"`
	Score    int      `json:"score"`
	New      []string `json:"new"`
	Changed  []string `json:"changed"`
	Resolved []string `json:"resolved"`
}

// TeamResult scores one team's findings; see docs/concepts.md for the verdict rule.
type TeamResult struct {
	Score    int    `json:"score"`
	Verdict  string `json:"verdict"`
	Blockers int    `json:"blockers"`
	Warnings int    `json:"warnings"`
	Infos    int    `json:"infos"`
}

// BundleInfo names a bundle that took part in an evaluation.
type BundleInfo struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
	// Source is "embedded" for a bundle compiled into the binary, else the path or URL it
	// was read from.
	Source string `json:"source"`
	// Signature is SignatureVerified when the bundle's signature was checked against a key,
	// SignatureNotChecked when it carries one that was loaded without a key, and empty for an
	// unsigned or embedded bundle.
	Signature string   `json:"signature,omitempty"`
	Roots     []string `json:"roots"`
}

// Signature states of a loaded bundle.
const (
	SignatureVerified   = "verified"
	SignatureNotChecked = "not checked"
)

// KBMeta describes the knowledge base: its horizon is the newest minor it can judge.
type KBMeta struct {
	Horizon       string `json:"horizon"`
	GeneratedFrom string `json:"generatedFrom"`
	Citation      string `json:"citation,omitempty"`
}

// TargetResult is the judgement for one target minor.
type TargetResult struct {
	Target          string    `json:"target"`
	Verdict         string    `json:"verdict"`
	Score           int       `json:"score"`
	Blockers        int       `json:"blockers"`
	Warnings        int       `json:"warnings"`
	Infos           int       `json:"infos"`
	SuppressedCount int       `json:"suppressedCount"`
	Findings        []Finding `json:"findings"`
	Suppressed      []Finding `json:"suppressed"`
	NotAssessed     []Gap     `json:"notAssessed"`
	// Teams is keyed by team; "(unattributed)" holds findings no team owns.
	Teams map[string]TeamResult `json:"teams,omitempty"`
	// Cluster is set by a gate judged against a stored cluster: the whole cluster's
	// judgement with the gated manifests applied. The target's own verdict, score and counts
	// are then the manifests' share: the findings whose Source is SourceManifest.
	Cluster *ClusterResult `json:"cluster,omitempty"`
}

// ClusterResult is a stored cluster's judgement with a gate's manifests applied.
type ClusterResult struct {
	Name       string `json:"name"`
	SnapshotID int64  `json:"snapshotId"`
	Verdict    string `json:"verdict"`
	Score      int    `json:"score"`
	Blockers   int    `json:"blockers"`
	Warnings   int    `json:"warnings"`
	Infos      int    `json:"infos"`
}

// Where a gate judged against a stored cluster found a finding (Finding.Source).
const (
	// SourceManifest: the gated manifests introduce it (a new key, a raised severity, or
	// an object the cluster's own finding did not name).
	SourceManifest = "manifest"
	// SourceCluster: the cluster already had it; it never fails the gate.
	SourceCluster = "cluster"
)

// Finding is one thing that breaks, or may break, the upgrade. Key is stable across runs
// and never contains a count.
type Finding struct {
	Key               string                `json:"key"`
	Category          string                `json:"category"`
	Severity          string                `json:"severity"`
	Target            string                `json:"target"`
	Title             string                `json:"title"`
	Detail            string                `json:"detail,omitempty"`
	Remediation       string                `json:"remediation,omitempty"`
	Objects           []inventory.ObjectRef `json:"objects,omitempty"`
	ObjectsOmitted    int                   `json:"objectsOmitted,omitempty"`
	SuppressedObjects int                   `json:"suppressedObjects,omitempty"`
	Namespaces        []string              `json:"namespaces,omitempty"`
	Citations         []string              `json:"citations,omitempty"`
	// Calls are deprecated-API requests the apiserver counted at this finding's API.
	Calls []string `json:"calls,omitempty"`
	// Callers are who the API server's audit events show calling this finding's API, the
	// busiest first (by count, then the latest seen, then user agent; the built-in rules list
	// ten: lib/calls max_listed); CallersOmitted counts the others.
	Callers        []Caller        `json:"callers,omitempty"`
	CallersOmitted *CallersOmitted `json:"callersOmitted,omitempty"`
	// Teams own the finding's namespaces, through the namespace team label.
	Teams       []string     `json:"teams,omitempty"`
	Pack        string       `json:"pack,omitempty"`
	Suppression *Suppression `json:"suppression,omitempty"`
	// Source is set by a gate judged against a stored cluster: SourceManifest or
	// SourceCluster.
	Source string `json:"source,omitempty"`
	// Fix is the chart advisor's answer for a finding about a release's chart.
	Fix *ChartFix `json:"fix,omitempty"`
}

// Caller is one caller of a deprecated API as the audit events aggregate it
// (inventory.AuditCaller): one verb by one user with one user agent. Times are
// inventory.AuditTime strings.
type Caller struct {
	UserAgent string `json:"userAgent"`
	User      string `json:"user"`
	// ServiceAccount is "namespace/name" when User is a service account.
	ServiceAccount string `json:"serviceAccount,omitempty"`
	Verb           string `json:"verb"`
	// Subresource is set when the caller called one ("status").
	Subresource string `json:"subresource,omitempty"`
	Count       int64  `json:"count"`
	FirstSeen   string `json:"firstSeen"`
	LastSeen    string `json:"lastSeen"`
	// SourceRanges are the client addresses as /24 (IPv4) and /64 (IPv6) ranges.
	SourceRanges        []string `json:"sourceRanges,omitempty"`
	SourceRangesOmitted int      `json:"sourceRangesOmitted,omitempty"`
}

// CallersOmitted counts the callers of a finding's API past those it lists, and their calls.
// Callers the reading could not track (past inventory.MaxAuditTracked) are in Calls only.
type CallersOmitted struct {
	Callers int64 `json:"callers"`
	Calls   int64 `json:"calls"`
}

// ChartFix names the chart version to upgrade to, for a finding about a Helm release's or
// a GitOps chart's chart, as the chart advisor judged it (inventory.ChartAdvice).
type ChartFix struct {
	Chart      string `json:"chart"`
	Repository string `json:"repository,omitempty"`
	// From is the installed (or declared) chart version; To the lowest version at or above
	// it that no rule blocks at this finding's target, empty when none does.
	From           string `json:"from"`
	To             string `json:"to,omitempty"`
	FromAppVersion string `json:"fromAppVersion,omitempty"`
	ToAppVersion   string `json:"toAppVersion,omitempty"`
	// APIsAdded and APIsRemoved are what To renders that From does not, and the reverse.
	APIsAdded   []string `json:"apisAdded,omitempty"`
	APIsRemoved []string `json:"apisRemoved,omitempty"`
	// EveryHop is the lowest version no rule blocks at any hop of the plan (--plan), or at
	// every target of the scan.
	EveryHop string `json:"everyHop,omitempty"`
	// Status: "upgrade" (To is named), "none" (no version read works), "unread" (the
	// repository could not be read; Reason says why).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// With status none: how many versions above From were judged, how many could not be
	// (fetched or rendered), and how many were never fetched (the bound, a search cut
	// short). "none" means no version works only when the last two are 0 and Complete.
	Judged    int `json:"judged,omitempty"`
	Unjudged  int `json:"unjudged,omitempty"`
	NotJudged int `json:"notJudged,omitempty"`
	// Complete says every version above From the repository offers was judged.
	Complete bool `json:"complete,omitempty"`
}

// ChartFix statuses.
const (
	ChartFixUpgrade = "upgrade"
	ChartFixNone    = "none"
	ChartFixUnread  = "unread"
)

// Introduced reports whether the finding counts against what is being judged: always,
// except a finding a gate's cluster context already had.
func (f Finding) Introduced() bool { return f.Source != SourceCluster }

// Suppression says which ignore rule took a finding out of the score.
type Suppression struct {
	// Source is "config" (.upgradescope.yaml; Index is the rule's) or "annotation".
	Source  string `json:"source"`
	Index   int    `json:"index"`
	Reason  string `json:"reason"`
	Expires string `json:"expires,omitempty"`
}

// Gap is something that could not be assessed. A required gap makes the verdict unknown.
type Gap struct {
	Capability string   `json:"capability"`
	Required   bool     `json:"required"`
	Reason     string   `json:"reason"`
	Partial    bool     `json:"partial,omitempty"`
	Skipped    []string `json:"skipped,omitempty"`
}

// IgnoreRule is one suppression from .upgradescope.yaml: exactly one of Key or Category,
// optional globs, a required reason, and an optional last day (YYYY-MM-DD, UTC).
type IgnoreRule struct {
	Key       string `json:"key,omitempty"`
	Category  string `json:"category,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	File      string `json:"file,omitempty"`
	Reason    string `json:"reason"`
	Expires   string `json:"expires,omitempty"`
	Index     int    `json:"index"`
	Line      int    `json:"line,omitempty"`
}
