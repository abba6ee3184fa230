// Package inventory holds the document collectors produce and the engine judges:
// observations only, never a verdict or a severity.
package inventory

import (
	"slices"
	"sort"
	"time"
)

// SchemaVersion is the version of the document this package reads and writes.
const SchemaVersion = 1

// Sources of an inventory.
const (
	SourceCluster   = "cluster"
	SourceFiles     = "files"
	SourceManifests = "manifests"
)

// Capability names. A capability is one collector step; it says what it could not see.
const (
	// CapAPIUsage: the objects at each API version, as manifests write them (files) or at
	// the kinds the knowledge base flags (live).
	CapAPIUsage = "api-usage"
	// CapDeprecatedCalls: the apiserver's apiserver_requested_deprecated_apis metric (live
	// only; managed control planes often forbid /metrics).
	CapDeprecatedCalls = "deprecated-calls"
	// CapHelm: Helm's stored releases, with each chart's kubeVersion and the APIs of its
	// stored manifest (live only).
	CapHelm = "helm"
	// CapAddons: what add-ons are detected from: workload images, Helm and GitOps charts,
	// IngressClasses.
	CapAddons = "addons"
	// CapVersions: the server version and provider, the nodes' kubelet versions and
	// container runtimes, and the control-plane components' versions (live only).
	CapVersions = "versions"
	// CapCRDs: CustomResourceDefinitions with their versions and storedVersions, and the
	// versions their objects use.
	CapCRDs = "crds"
)

// MaxObjectRefs is how many object references one APIUsage entry lists; the rest are counted
// in ObjectsOmitted.
const MaxObjectRefs = 100

// Document is one cluster's (or one manifest set's) inventory.
type Document struct {
	SchemaVersion int       `json:"schemaVersion"`
	Source        string    `json:"source"`
	ClusterID     string    `json:"clusterId,omitempty"`
	CollectedAt   time.Time `json:"collectedAt"`
	ServerVersion string    `json:"serverVersion,omitempty"`
	// EmulatedVersion is set when /version reports an emulated minor ("1.32"): the cluster
	// behaves as that minor and is judged as it.
	EmulatedVersion string `json:"emulatedVersion,omitempty"`
	// Provider is eks, gke, aks or other for a live cluster.
	Provider  string `json:"provider,omitempty"`
	FilesBase string `json:"filesBase,omitempty"`
	// FilesExcluded are the paths a walk of FilesBase left out because an exclusion pattern
	// (--exclude, .upgradescopeignore) matched them: listed so an exclusion is never silent.
	// FilesExcludedOmitted counts those past MaxExcludedPaths.
	FilesExcluded        []ExcludedPath        `json:"filesExcluded,omitempty"`
	FilesExcludedOmitted int                   `json:"filesExcludedOmitted,omitempty"`
	Capabilities         map[string]Capability `json:"capabilities"`
	APIUsage             []APIUsage            `json:"apiUsage"`
	// APIAuthorshipUnknown holds objects of flagged kinds no writer can be attributed to:
	// no managedFields and no last-applied-configuration.
	APIAuthorshipUnknown []APIUsage `json:"apiAuthorshipUnknown,omitempty"`

	DeprecatedCalls []DeprecatedCall `json:"deprecatedCalls,omitempty"`
	HelmReleases    []HelmRelease    `json:"helmReleases,omitempty"`
	WorkloadImages  []WorkloadImage  `json:"workloadImages,omitempty"`
	// WorkloadImagesOmitted counts the containers whose image version is not listed: past
	// MaxListedImages, and observed by no bundle (ImageWatch).
	WorkloadImagesOmitted int                     `json:"workloadImagesOmitted,omitempty"`
	IngressClasses        []IngressClass          `json:"ingressClasses,omitempty"`
	Nodes                 []NodeGroup             `json:"nodes,omitempty"`
	ControlPlane          []ControlPlaneComponent `json:"controlPlane,omitempty"`
	Namespaces            []Namespace             `json:"namespaces,omitempty"`
	CRDs                  []CRD                   `json:"crds,omitempty"`
	// OrphanUsage are the custom resources of a files inventory whose CRD the files do not
	// hold (the crds capability names them): a gate judged against a stored cluster judges
	// them against the cluster's CRD of their group and kind (Overlay).
	OrphanUsage []APIUsage `json:"orphanUsage,omitempty"`

	GitopsCharts []GitopsChart `json:"gitopsCharts,omitempty"`

	// ChartAdvice is the chart advisor's reading of chart repositories (--advise-charts).
	ChartAdvice []ChartAdvice `json:"chartAdvice,omitempty"`
	// ChartAdviceOmitted counts the charts advised past the section's bound on values.
	ChartAdviceOmitted int `json:"chartAdviceOmitted,omitempty"`

	// Probes are the field observations the loaded bundles declared (ProbeSpec), one per
	// probe, in id order.
	Probes []Probe `json:"probes,omitempty"`

	// Preflight holds what stalls an upgrade that no API version shows (preflight.go).
	Preflight *Preflight `json:"preflight,omitempty"`

	// AuditCalls is who calls deprecated APIs, from the API server's audit events
	// (audit.go).
	AuditCalls *AuditCalls `json:"auditCalls,omitempty"`

	// Rehearsal is what an API server of the target refused when the objects were replayed
	// into it (rehearsal.go); only upgradescope rehearse writes it.
	Rehearsal *Rehearsal `json:"rehearsal,omitempty"`
}

// ExcludedPath is a file or directory a walk of manifests did not read because a pattern
// excluded it: the path relative to the walk's root, the pattern, and where the pattern was
// written ("--exclude", ".upgradescopeignore:3"). An excluded directory was not walked.
type ExcludedPath struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Origin  string `json:"origin,omitempty"`
}

// Capability says whether a collector step saw everything it looked for.
type Capability struct {
	Available bool     `json:"available"`
	Partial   bool     `json:"partial,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Skipped   []string `json:"skipped,omitempty"`
}

// APIUsage is every object of one group/version/kind, aggregated.
type APIUsage struct {
	Group      string         `json:"group"`
	Version    string         `json:"version"`
	Kind       string         `json:"kind"`
	Count      int            `json:"count"`
	Namespaces map[string]int `json:"namespaces"`
	// NamespacesOmitted counts the objects in namespaces past the first MaxNamespaceCounts:
	// objects, not namespaces, since telling a new namespace from a seen one would take the
	// memory the bound saves.
	NamespacesOmitted int         `json:"namespacesOmitted,omitempty"`
	Objects           []ObjectRef `json:"objects,omitempty"`
	ObjectsOmitted    int         `json:"objectsOmitted,omitempty"`
}

// Add counts one object of the row's kind, naming it while fewer than MaxObjectRefs are
// named and counting its namespace while fewer than MaxNamespaceCounts are, with its strings
// cut to MaxStringLength: the bounds the schema sets, so every collector aggregates alike and
// a row never outgrows them. Namespaces must be non-nil.
func (u *APIUsage) Add(ref ObjectRef) {
	ref = ref.bounded()
	u.Count++
	if _, ok := u.Namespaces[ref.Namespace]; ok || len(u.Namespaces) < MaxNamespaceCounts {
		u.Namespaces[ref.Namespace]++
	} else {
		u.NamespacesOmitted++
	}
	if len(u.Objects) < MaxObjectRefs {
		u.Objects = append(u.Objects, ref)
	} else {
		u.ObjectsOmitted++
	}
}

// APIVersion renders the group and version the way a manifest spells them.
func (u APIUsage) APIVersion() string {
	if u.Group == "" {
		return u.Version
	}
	return u.Group + "/" + u.Version
}

// APINames spells each row's API as "apiVersion Kind" ("networking.k8s.io/v1 Ingress", "v1
// ConfigMap"), once each, sorted: how the chart advisor names the APIs a manifest uses.
func APINames(rows []APIUsage) []string {
	out := make([]string, 0, len(rows))
	for _, u := range rows {
		out = append(out, u.APIVersion()+" "+u.Kind)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ObjectRef names one object; File, Line and RenderedFrom are set in files mode. Kind is set
// where the list it is in spans kinds (a finding over probe observations).
type ObjectRef struct {
	Kind         string `json:"kind,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
	Name         string `json:"name"`
	File         string `json:"file,omitempty"`
	Line         int    `json:"line,omitempty"`
	RenderedFrom string `json:"renderedFrom,omitempty"`
	// Ignore is the object's own suppression annotation, when it has one.
	Ignore *IgnoreAnnotation `json:"ignore,omitempty"`
}

// Merge adds the objects another aggregate of the same kind counted, as if each had been
// added after u's own, with the same bounds as Add.
func (u *APIUsage) Merge(v APIUsage) {
	u.Count += v.Count
	for _, ns := range sortedKeys(v.Namespaces) {
		if _, ok := u.Namespaces[ns]; ok || len(u.Namespaces) < MaxNamespaceCounts {
			u.Namespaces[ns] += v.Namespaces[ns]
		} else {
			u.NamespacesOmitted += v.Namespaces[ns]
		}
	}
	u.NamespacesOmitted += v.NamespacesOmitted
	kept := min(len(v.Objects), MaxObjectRefs-len(u.Objects))
	u.Objects = append(u.Objects, v.Objects[:kept]...)
	u.ObjectsOmitted += v.ObjectsOmitted + len(v.Objects) - kept
}

// sortedKeys keeps which namespaces a merge lists independent of map order.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SortAPIUsage orders entries by group, version and kind, the order documents keep.
func SortAPIUsage(us []APIUsage) {
	sort.Slice(us, func(i, j int) bool {
		a, b := us[i], us[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
}

// KeepNamespaces keeps the n namespaces with the most objects (the first by name among
// equals) and counts the objects of the rest in NamespacesOmitted, so Count still holds.
func (u *APIUsage) KeepNamespaces(n int) {
	if len(u.Namespaces) <= n {
		return
	}
	names := sortedKeys(u.Namespaces)
	sort.SliceStable(names, func(i, j int) bool { return u.Namespaces[names[i]] > u.Namespaces[names[j]] })
	for _, ns := range names[n:] {
		u.NamespacesOmitted += u.Namespaces[ns]
		delete(u.Namespaces, ns)
	}
}
