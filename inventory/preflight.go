package inventory

// Pre-flight observations: what stalls an upgrade that no API version shows (a drain a
// PodDisruptionBudget forbids, an admission webhook whose backend is down, an aggregated
// API that is not Available, a node that is not ready, a flag the target's components
// refuse). Collectors record what they saw, joined where a rule could not join it (a
// webhook's service and its ready endpoints); the rules in policies/rules/.../preflight
// judge. Each part has its own capability, so a part that could not be read is a gap.

// Capabilities of the pre-flight sections. Live, each is required except kubelet-config
// (the kubelet's configz needs nodes/proxy, which the chart does not grant by default) and
// component-flags when the control plane runs no pods the cluster shows (a managed one).
// In files mode the live-only ones are recorded as not available and are optional.
const (
	// CapDisruptionBudgets: PodDisruptionBudgets (files and live; status live only).
	CapDisruptionBudgets = "disruption-budgets"
	// CapPods: the pods a drain would have to evict (live), or the bare Pods and pod
	// templates of manifests (files).
	CapPods = "pods"
	// CapWebhooks: validating and mutating admission webhook configurations.
	CapWebhooks = "admission-webhooks"
	// CapEndpoints: the ready endpoints of the services webhooks, aggregated APIServices and
	// CRD conversion webhooks call (live only).
	CapEndpoints = "service-endpoints"
	// CapAPIServices: APIService objects and their Available condition (live only).
	CapAPIServices = "api-services"
	// CapNodeState: node conditions, cordons and operating systems (live only).
	CapNodeState = "node-state"
	// CapComponentFlags: the flags of control-plane static pods and kube-proxy (live: the
	// kube-system pods; files: static pod manifests and kube-proxy configuration).
	CapComponentFlags = "component-flags"
	// CapKubeletConfig: kubelet configuration (live: configz through the API server's node
	// proxy when allowed; files: KubeletConfiguration documents).
	CapKubeletConfig = "kubelet-config"
)

// Bounds of the pre-flight sections.
const (
	// MaxPreflightItems bounds each list of the section (budgets, webhooks, APIServices,
	// conversions, placements, components, node systems); past it items are counted in the
	// list's Omitted field.
	MaxPreflightItems = 1000
	// MaxPreflightNames bounds a list of names inside one item (a budget's pods, a node
	// system's nodes).
	MaxPreflightNames = 100
	// MaxWebhookRules bounds one webhook's rules, and each rule's lists.
	MaxWebhookRules = 100
	// MaxComponentSettings bounds one component's feature gates and flags.
	MaxComponentSettings = 500
)

// Preflight is everything the pre-flight rules read, by part.
type Preflight struct {
	DisruptionBudgets        []DisruptionBudget `json:"disruptionBudgets,omitempty"`
	DisruptionBudgetsOmitted int                `json:"disruptionBudgetsOmitted,omitempty"`
	// Drain holds the pods a node drain treats specially (kubectl drain's filters).
	Drain *DrainPods `json:"drain,omitempty"`
	// Placements are workloads whose required anti-affinity or topology spread on the
	// node hostname needs a distinct node per replica.
	Placements        []Placement `json:"placements,omitempty"`
	PlacementsOmitted int         `json:"placementsOmitted,omitempty"`
	Webhooks          []Webhook   `json:"webhooks,omitempty"`
	WebhooksOmitted   int         `json:"webhooksOmitted,omitempty"`
	// APIServices are the APIService objects a service backs (aggregated APIs); local ones
	// (served by kube-apiserver itself) are left out.
	APIServices        []APIService `json:"apiServices,omitempty"`
	APIServicesOmitted int          `json:"apiServicesOmitted,omitempty"`
	// Conversions are the CRDs whose versions convert through a webhook.
	Conversions        []Conversion `json:"conversions,omitempty"`
	ConversionsOmitted int          `json:"conversionsOmitted,omitempty"`
	// NodeState is the nodes' readiness, cordons, pressure and operating systems (live).
	NodeState *NodeState `json:"nodeState,omitempty"`
	// Components are the flags and configuration of control-plane components, kube-proxy
	// and kubelets.
	Components        []Component `json:"components,omitempty"`
	ComponentsOmitted int         `json:"componentsOmitted,omitempty"`
}

// DisruptionBudget is one PodDisruptionBudget: its spec as written, and live its status
// and the pods it selects; in files mode the workloads whose pod template it selects.
type DisruptionBudget struct {
	Object     ObjectRef `json:"object"`
	APIVersion string    `json:"apiVersion,omitempty"`
	// MinAvailable and MaxUnavailable as written: "2" or "50%"; absent when unset.
	MinAvailable   string `json:"minAvailable,omitempty"`
	MaxUnavailable string `json:"maxUnavailable,omitempty"`
	// SelectorEmpty is an empty selector: every pod of the namespace in policy/v1, none in
	// policy/v1beta1.
	SelectorEmpty              bool   `json:"selectorEmpty,omitempty"`
	UnhealthyPodEvictionPolicy string `json:"unhealthyPodEvictionPolicy,omitempty"`
	// Status is the budget's status (live only).
	Status *BudgetStatus `json:"status,omitempty"`
	// Pods are the pods the budget selects (live), up to MaxPreflightNames.
	Pods        []string `json:"pods,omitempty"`
	PodsOmitted int      `json:"podsOmitted,omitempty"`
	// Workloads are the workloads whose pod template the selector matches (files), with
	// their replicas, up to MaxPreflightNames.
	Workloads        []WorkloadReplicas `json:"workloads,omitempty"`
	WorkloadsOmitted int                `json:"workloadsOmitted,omitempty"`
}

// MayBlock says whether a budget could stop a drain, as far as it shows alone: with a
// status, when the status allows no disruption; live without one (the disruption
// controller has not judged its spec yet), always; a manifest's (which has no status), when
// maxUnavailable is 0 or 0%, or minAvailable is set (its workloads' replicas decide). Lists
// cut at MaxPreflightItems keep such budgets first.
func (b DisruptionBudget) MayBlock(live bool) bool {
	switch {
	case b.Status != nil:
		return b.Status.DisruptionsAllowed == 0
	case live:
		return true
	}
	return b.MaxUnavailable == "0" || b.MaxUnavailable == "0%" || b.MinAvailable != ""
}

// BudgetStatus is a PodDisruptionBudget's status as the disruption controller wrote it.
type BudgetStatus struct {
	DisruptionsAllowed int `json:"disruptionsAllowed"`
	CurrentHealthy     int `json:"currentHealthy"`
	DesiredHealthy     int `json:"desiredHealthy"`
	ExpectedPods       int `json:"expectedPods"`
}

// WorkloadReplicas is a workload and the replicas it asks for (1 when unset).
type WorkloadReplicas struct {
	Object   ObjectRef `json:"object"`
	Replicas int       `json:"replicas"`
	// Autoscaled says a HorizontalPodAutoscaler or a KEDA ScaledObject of the manifests
	// scales the workload: its replicas are the autoscaler's, not the ones written.
	Autoscaled bool `json:"autoscaled,omitempty"`
}

// DrainPods are the pods kubectl drain will not evict without a flag: those no controller
// owns (--force deletes them for good) and those with emptyDir volumes
// (--delete-emptydir-data loses their data). DaemonSet pods and mirror pods, which drain
// skips, are in neither.
type DrainPods struct {
	Examined     int     `json:"examined"`
	Unreplicated PodList `json:"unreplicated"`
	LocalStorage PodList `json:"localStorage"`
}

// PodList counts pods (or, in files mode, the objects that make them) and names up to
// MaxObjectRefs of them.
type PodList struct {
	Count          int         `json:"count"`
	Objects        []ObjectRef `json:"objects,omitempty"`
	ObjectsOmitted int         `json:"objectsOmitted,omitempty"`
}

// Placement is a workload whose pods need a node each: a required pod anti-affinity or a
// DoNotSchedule topology spread with maxSkew 1 over kubernetes.io/hostname that its own pods
// match.
type Placement struct {
	Object   ObjectRef `json:"object"`
	Replicas int       `json:"replicas"`
	// Rule is "anti-affinity" or "topology-spread".
	Rule string `json:"rule"`
}

// Webhook is one webhook of a ValidatingWebhookConfiguration or
// MutatingWebhookConfiguration.
type Webhook struct {
	// Configuration names the configuration (Kind is its kind), with file and line in
	// files mode.
	Configuration ObjectRef `json:"configuration"`
	APIVersion    string    `json:"apiVersion,omitempty"`
	Name          string    `json:"name"`
	// FailurePolicy as written; empty when unset (Fail in v1, Ignore in v1beta1).
	FailurePolicy string        `json:"failurePolicy,omitempty"`
	Rules         []WebhookRule `json:"rules,omitempty"`
	RulesOmitted  int           `json:"rulesOmitted,omitempty"`
	// CoversKubeSystem says the namespaceSelector matches the kube-system namespace (its
	// labels live, kubernetes.io/metadata.name=kube-system in files mode).
	CoversKubeSystem bool `json:"coversKubeSystem"`
	// ObjectSelectorEmpty says the webhook selects every object.
	ObjectSelectorEmpty bool `json:"objectSelectorEmpty"`
	// Service is the service the webhook calls; nil when it calls a URL.
	Service        *ServiceRef `json:"service,omitempty"`
	TimeoutSeconds int         `json:"timeoutSeconds,omitempty"`
}

// WebhookRule is one rule of a webhook, as written.
type WebhookRule struct {
	Operations  []string `json:"operations,omitempty"`
	APIGroups   []string `json:"apiGroups,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	Resources   []string `json:"resources,omitempty"`
	Scope       string   `json:"scope,omitempty"`
}

// ServiceRef is a service something calls and, live, what backs it.
type ServiceRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      int    `json:"port,omitempty"`
	// Found says the service exists (live only; absent in files mode).
	Found *bool `json:"found,omitempty"`
	// ReadyEndpoints counts its ready endpoints on the port (live only).
	ReadyEndpoints *int `json:"readyEndpoints,omitempty"`
}

// APIService is an aggregated API and its Available condition.
type APIService struct {
	Object  ObjectRef   `json:"object"`
	Group   string      `json:"group"`
	Version string      `json:"version"`
	Service *ServiceRef `json:"service,omitempty"`
	// Available is the condition's status (True, False, Unknown), empty when absent;
	// Reason and Message are the condition's.
	Available string `json:"available,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Conversion is a CRD that converts between its versions through a webhook.
type Conversion struct {
	CRD     ObjectRef   `json:"crd"`
	Group   string      `json:"group"`
	Kind    string      `json:"kind"`
	Service *ServiceRef `json:"service,omitempty"`
	// URL says the webhook is called by URL (not recorded: it may carry credentials).
	URL bool `json:"url,omitempty"`
}

// NodeState is the nodes as a drain and the target's kubelet meet them.
type NodeState struct {
	Examined int `json:"examined"`
	// Schedulable counts the nodes that are Ready and not cordoned.
	Schedulable int      `json:"schedulable"`
	NotReady    NameList `json:"notReady"`
	Cordoned    NameList `json:"cordoned"`
	// Pressure holds one list per condition that is True somewhere: MemoryPressure,
	// DiskPressure, PIDPressure, NetworkUnavailable.
	Pressure []NodeCondition `json:"pressure,omitempty"`
	// Systems groups the nodes by operating system image, kernel and container runtime.
	Systems        []NodeSystem `json:"systems,omitempty"`
	SystemsOmitted int          `json:"systemsOmitted,omitempty"`
}

// NameList counts and names up to MaxPreflightNames things.
type NameList struct {
	Count        int      `json:"count"`
	Names        []string `json:"names,omitempty"`
	NamesOmitted int      `json:"namesOmitted,omitempty"`
}

// NodeCondition is the nodes where one condition is True.
type NodeCondition struct {
	Condition string   `json:"condition"`
	Nodes     NameList `json:"nodes"`
}

// NodeSystem is the nodes running one OS image, kernel and runtime.
type NodeSystem struct {
	OSImage          string   `json:"osImage"`
	KernelVersion    string   `json:"kernelVersion"`
	ContainerRuntime string   `json:"containerRuntime"`
	KubeletVersion   string   `json:"kubeletVersion,omitempty"`
	Nodes            NameList `json:"nodes"`
}

// Component is one control-plane component, kube-proxy or kubelet as configured: the
// feature gates and flags it is given. Live, identical configurations of a component are one
// entry naming their nodes.
type Component struct {
	// Component is kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy or
	// kubelet.
	Component string `json:"component"`
	// Source is where it was read: static-pod (a kube-system pod or a manifest), daemonset,
	// configmap, kubelet-configz or config-file.
	Source string `json:"source"`
	// Object is the pod, DaemonSet, ConfigMap or file it was read from; File and Line
	// point at the flag or field in files mode.
	Object       ObjectRef     `json:"object"`
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`
	// Flags are the command-line flags as given (--name=value or --name value): their names,
	// and values only of the few flags the rules or a reader judge an upgrade by
	// (collectors/preflight valueFlags: v, proxy-mode, cgroup-driver, container-runtime,
	// container-runtime-endpoint, cloud-provider, runtime-config, the admission plugins,
	// authorization-mode), since any other value may be a secret.
	Flags        []Flag   `json:"flags,omitempty"`
	Omitted      int      `json:"omitted,omitempty"`
	Nodes        []string `json:"nodes,omitempty"`
	NodesOmitted int      `json:"nodesOmitted,omitempty"`
	// ProxyMode is kube-proxy's mode (iptables, ipvs, nftables, kernelspace), empty when
	// unset.
	ProxyMode string `json:"proxyMode,omitempty"`
	// FailCgroupV1 is the kubelet's failCgroupV1 setting when given.
	FailCgroupV1 *bool `json:"failCgroupV1,omitempty"`
}

// FeatureGate is one gate a component is started with, and where (files mode: the line).
type FeatureGate struct {
	Name  string `json:"name"`
	Value bool   `json:"value"`
	Line  int    `json:"line,omitempty"`
}

// Flag is one command-line flag.
type Flag struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	Line  int    `json:"line,omitempty"`
}
