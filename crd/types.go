// Package crd holds the ClusterReadiness resource: its manifest, its Go types, and the status
// the agent writes from the engine's reports.
package crd

import (
	_ "embed"

	"github.com/upgradescope/upgradescope/report"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Manifest is the CustomResourceDefinition, as the agent applies it and the chart ships it.
//
//go:embed clusterreadiness.yaml
var Manifest []byte

// Identity of the resource.
const (
	Group       = "upgradescope.basit.engineer"
	Version     = "v1alpha1"
	Kind        = "ClusterReadiness"
	Resource    = "clusterreadinesses"
	DefaultName = "cluster"
)

// GVR is what clients address.
var GVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// StatusErrorAnnotation is set on the object while the agent cannot write its status, with
// the reason; the next status written clears it.
const StatusErrorAnnotation = Group + "/status-error"

// Condition types the agent writes.
const (
	ConditionReady           = "Ready"
	ConditionAllTargetsReady = "AllTargetsReady"
	// ConditionBundlesCurrent is set when the agent polls bundle URLs: False while the last
	// download or activation failed (the last good bundles stay active).
	ConditionBundlesCurrent = "BundlesCurrent"
)

// Limits the status keeps to, so a worst-case status stays far below etcd's object limit.
const (
	MaxTargets     = 8
	MaxTopFindings = 20
	MaxTitle       = 512
	MaxRemediation = 1024
	MaxNote        = 2048
	MaxNotes       = 64
	MaxSource      = 2048
	// MaxConditionMessage is far below the schema's 32768, which no condition needs.
	MaxConditionMessage = 4096
)

// ClusterReadiness is the cluster's upgrade readiness.
type ClusterReadiness struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

// Spec is what to judge.
type Spec struct {
	Targets []string `json:"targets,omitempty"`
	// Ignore holds suppressions, with the rules of .upgradescope.yaml: the engine's own
	// type, of which the schema (clusterreadiness.yaml) admits key, category, namespace,
	// name, reason and expires; the agent sets Index, and File and Line stay empty.
	Ignore []report.IgnoreRule `json:"ignore,omitempty"`
}

// Status is what the agent found at its last tick.
type Status struct {
	ObservedGeneration    int64              `json:"observedGeneration,omitempty"`
	LastEvaluated         *metav1.Time       `json:"lastEvaluated,omitempty"`
	ObservedServerVersion string             `json:"observedServerVersion,omitempty"`
	AgentVersion          string             `json:"agentVersion,omitempty"`
	KBVersion             string             `json:"kbVersion,omitempty"`
	Bundles               []BundleRevision   `json:"bundles,omitempty"`
	NotAssessed           []string           `json:"notAssessed,omitempty"`
	Targets               []TargetStatus     `json:"targets,omitempty"`
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
}

// BundleRevision names a policy bundle that took part.
type BundleRevision struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
	// Source is "embedded", or the path or URL the bundle was read from.
	Source string `json:"source,omitempty"`
	// ActivatedAt is when the agent started evaluating with this revision.
	ActivatedAt *metav1.Time `json:"activatedAt,omitempty"`
}

// TargetStatus summarises one target's judgement.
type TargetStatus struct {
	Target      string         `json:"target"`
	Verdict     string         `json:"verdict"`
	Score       int            `json:"score"`
	Blockers    int            `json:"blockers"`
	Warnings    int            `json:"warnings"`
	Infos       int            `json:"infos"`
	Suppressed  int            `json:"suppressed,omitempty"`
	ByCategory  map[string]int `json:"byCategory,omitempty"`
	TopFindings []TopFinding   `json:"topFindings,omitempty"`
}

// TopFinding is one of a target's most severe findings, its text clipped.
type TopFinding struct {
	Key         string `json:"key"`
	Category    string `json:"category"`
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Remediation string `json:"remediation,omitempty"`
}
