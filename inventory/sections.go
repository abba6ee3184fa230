package inventory

import (
	"strings"
	"unicode"
)

// DeprecatedCall is one row of the apiserver metric apiserver_requested_deprecated_apis.
type DeprecatedCall struct {
	Group          string `json:"group"`
	Version        string `json:"version"`
	Resource       string `json:"resource"`
	Subresource    string `json:"subresource,omitempty"`
	RemovedRelease string `json:"removedRelease,omitempty"`
}

// HelmRelease is one deployed Helm release as its storage records it.
type HelmRelease struct {
	Name         string     `json:"name"`
	Namespace    string     `json:"namespace"`
	Chart        string     `json:"chart"`
	ChartVersion string     `json:"chartVersion,omitempty"`
	AppVersion   string     `json:"appVersion,omitempty"`
	KubeVersion  string     `json:"kubeVersion,omitempty"`
	Status       string     `json:"status,omitempty"`
	Revision     int        `json:"revision,omitempty"`
	ManifestAPIs []APIUsage `json:"manifestApis,omitempty"`
}

// MaxLabelSets is how many distinct label sets one image version lists.
const MaxLabelSets = 10

// WorkloadImage is one image repository seen in pod templates with every version (tag and
// digest) it runs at. Which add-on it is, the rule packs decide.
type WorkloadImage struct {
	// Repository is the reference without tag and digest, as written: "nginx",
	// "registry.k8s.io/ingress-nginx/controller".
	Repository string         `json:"repository"`
	Versions   []ImageVersion `json:"versions"`
}

// ImageVersion is one tag and digest of a repository and the namespaces it runs in. A
// version the bundles ask to observe (ImageWatch) also keeps the recommended-label sets it
// was seen with (app.kubernetes.io/name, /version, /part-of, /instance and helm.sh/chart, as
// the pod template or its workload set them) and up to MaxImageObjectRefs workloads running
// it; in files mode with their file and line.
type ImageVersion struct {
	Tag        string   `json:"tag,omitempty"`
	Digest     string   `json:"digest,omitempty"`
	Namespaces []string `json:"namespaces"`
	// NamespacesOmitted counts the sightings in namespaces past the first MaxImageNamespaces.
	NamespacesOmitted int                 `json:"namespacesOmitted,omitempty"`
	LabelSets         []map[string]string `json:"labelSets,omitempty"`
	LabelSetsOmitted  int                 `json:"labelSetsOmitted,omitempty"`
	Objects           []ObjectRef         `json:"objects,omitempty"`
	ObjectsOmitted    int                 `json:"objectsOmitted,omitempty"`
}

// IngressClass is an IngressClass object and the controller it names.
type IngressClass struct {
	Name       string `json:"name"`
	Controller string `json:"controller"`
}

// MaxNodeNames is how many node names one group lists; the rest are counted.
const MaxNodeNames = 100

// NodeGroup is every node running one kubelet version and container runtime. Nodes are
// grouped so skew rules iterate a few versions, not thousands of nodes.
type NodeGroup struct {
	KubeletVersion   string   `json:"kubeletVersion"`
	ContainerRuntime string   `json:"containerRuntime,omitempty"`
	Count            int      `json:"count"`
	Names            []string `json:"names"`
	NamesOmitted     int      `json:"namesOmitted,omitempty"`
}

// ControlPlaneComponent is the instances of a control-plane component at one version.
// kube-proxy, which runs on every node, is grouped by its version and its node's kubelet
// version, naming up to MaxNodeNames nodes.
type ControlPlaneComponent struct {
	Component      string   `json:"component"`
	Version        string   `json:"version"`
	Count          int      `json:"count,omitempty"`
	KubeletVersion string   `json:"kubeletVersion,omitempty"`
	Nodes          []string `json:"nodes,omitempty"`
	NodesOmitted   int      `json:"nodesOmitted,omitempty"`
}

// Namespace is a namespace and the team its team label names.
type Namespace struct {
	Name string `json:"name"`
	Team string `json:"team,omitempty"`
}

// CRD is a CustomResourceDefinition with its versions and the custom resources stored or
// written at each.
type CRD struct {
	Group          string       `json:"group"`
	Kind           string       `json:"kind"`
	Plural         string       `json:"plural,omitempty"`
	Versions       []CRDVersion `json:"versions"`
	StoredVersions []string     `json:"storedVersions,omitempty"`
	Usage          []APIUsage   `json:"usage,omitempty"`
}

// CRDVersion is one version a CRD declares.
type CRDVersion struct {
	Name               string `json:"name"`
	Served             bool   `json:"served"`
	Storage            bool   `json:"storage"`
	Deprecated         bool   `json:"deprecated,omitempty"`
	DeprecationWarning string `json:"deprecationWarning,omitempty"`
}

// IgnoreAnnotation is an object's own suppression: upgradescope.basit.engineer/ignore (comma-
// separated categories or keys) with the required upgradescope.basit.engineer/ignore-reason.
type IgnoreAnnotation struct {
	Rules  string `json:"rules"`
	Reason string `json:"reason"`
}

// Annotation keys objects use to suppress their own findings.
const (
	AnnotationIgnore       = "upgradescope.basit.engineer/ignore"
	AnnotationIgnoreReason = "upgradescope.basit.engineer/ignore-reason"
)

// HasReason says whether s can stand as a suppression's reason: it holds a letter or a digit.
// Anything else, though not blank (a zero-width space, a word joiner, a byte order mark,
// combining marks or punctuation alone), shows a reviewer nothing. Wherever a reason is
// accepted (the suppression file, a ClusterReadiness spec.ignore, the ignore-reason
// annotation, an inventory's ignore.reason, whose schema pattern says the same) it is held to
// this.
//
// The Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) are letters that draw nothing: the
// default-ignorable letters do not count.
func HasReason(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
	})
}

// Tools a GitopsChart comes from.
const (
	ToolArgoCD = "argocd"
	ToolFlux   = "flux"
)

// Kinds of a GitopsChart's version: what the author asked for, not what is installed.
const (
	VersionExact  = "exact"
	VersionRange  = "range"
	VersionDigest = "digest"
)

// GitopsChart is a chart an Argo CD Application or a Flux HelmRelease declares. Its version is
// what the author asked for, often a constraint; only an exact one is a chart version.
type GitopsChart struct {
	Tool string `json:"tool"`
	// Namespace and Name are the Application's or HelmRelease's own.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// TargetNamespace is where the chart deploys.
	TargetNamespace string `json:"targetNamespace"`
	Chart           string `json:"chart"`
	// RepoURL keeps only scheme, host, port and path (and an OCI digest).
	RepoURL string `json:"repoURL,omitempty"`
	// SourceKind is a Flux source kind (HelmRepository, GitRepository, Bucket,
	// OCIRepository) or, for Argo CD, helm, oci or git.
	SourceKind  string `json:"sourceKind,omitempty"`
	Version     string `json:"version,omitempty"`
	VersionKind string `json:"versionKind,omitempty"`
}

// Sources a ChartAdvice comes from.
const (
	ChartSourceHelm   = "helm"
	ChartSourceArgoCD = ToolArgoCD
	ChartSourceFlux   = ToolFlux
)

// Bounds of the chart advisor's section: charts advised, versions judged per chart, APIs
// listed per version.
const (
	MaxChartAdvice         = 10000
	MaxChartVersionsJudged = 50
	MaxChartVersionAPIs    = 200
)

// ChartAdvice is what the chart advisor (--advise-charts) read of one chart's repository for
// a Helm release or a GitOps chart, and what the loaded rules said of each version it judged
// there: each version was rendered at the release's own values and evaluated on its own, at
// every target of the scan. Versions[0] is the installed (Helm) or declared (GitOps) version;
// the rest ascend. The engine reads the lowest version no rule blocks as the fix of the
// release's findings.
type ChartAdvice struct {
	Source    string `json:"source"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Chart     string `json:"chart"`
	// Repository keeps only scheme, host, port and path: never credentials or a query.
	Repository string `json:"repository,omitempty"`
	Installed  string `json:"installed"`
	// Read says the repository's versions were read; Reason says why not, or what the
	// advice had to leave out (values it could not read).
	Read   bool   `json:"read"`
	Reason string `json:"reason,omitempty"`
	// ValuesNotRead names the parts of the declared values that could not be read
	// ("valuesFrom", "valueFiles"): every version was judged without them.
	ValuesNotRead []string `json:"valuesNotRead,omitempty"`
	// Stopped says why the search ended before judging every version it could: the
	// repository could not be read, the installed version is not semver, the declared
	// version could not be judged.
	Stopped string `json:"stopped,omitempty"`
	// Targets are the minors every judged version was evaluated at.
	Targets         []string             `json:"targets,omitempty"`
	Versions        []ChartVersionJudged `json:"versions,omitempty"`
	VersionsOmitted int                  `json:"versionsOmitted,omitempty"`
}

// ChartVersionJudged is one chart version the advisor fetched, rendered and evaluated.
type ChartVersionJudged struct {
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion,omitempty"`
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIs are the "group/version Kind" its templates render at the release's values, sorted.
	APIs        []string `json:"apis,omitempty"`
	APIsOmitted int      `json:"apisOmitted,omitempty"`
	// Blocks lists, by target, the keys of the blocker findings the rules raised against
	// this version there; a target it lacks admits the version.
	Blocks map[string][]string `json:"blocks,omitempty"`
	// Error says why the version could not be fetched, rendered or judged: it is then
	// judged at no target.
	Error string `json:"error,omitempty"`
}
