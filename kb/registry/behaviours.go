package registry

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// BehaviourFiles are the shipped behaviour entries: one YAML file per behaviour Kubernetes
// removed or deprecated (a volume plugin, a label kubeadm stopped applying, an annotation the
// kubelet ignores), each claim with its citation.
//
//go:embed behaviours/*.yaml
var BehaviourFiles embed.FS

// Behaviour is one removed or deprecated behaviour and how to see it in a cluster: the probe
// whose observation shows the objects relying on it, or the node container runtime it needs.
type Behaviour struct {
	ID    string `yaml:"id" json:"id"`
	Title string `yaml:"title" json:"title"`
	// Probe is the observation the behaviour reads; entries may share one probe, declared
	// identically.
	Probe *ProbeDecl `yaml:"probe" json:"-"`
	// NodeRuntime is a container runtime name (the part of containerRuntimeVersion before
	// "://"). Without RuntimeBefore, the nodes relying on the behaviour run it with a kubelet
	// older than the removal (the dockershim: a newer kubelet reaches Docker Engine another
	// way); with it, the nodes run a version of it older than RuntimeBefore, whatever their
	// kubelet, since the kubelet is what the upgrade replaces.
	NodeRuntime string `yaml:"nodeRuntime" json:"nodeRuntime,omitempty"`
	// RuntimeBefore is a runtime version ("2.0"): versions before it rely on the behaviour.
	RuntimeBefore string `yaml:"runtimeBefore" json:"runtimeBefore,omitempty"`
	Deprecated    *Claim `yaml:"deprecated" json:"deprecated,omitempty"`
	// Unsupported is the minor from which Kubernetes no longer supports the behaviour,
	// though it still works until the removal: from it a finding is at least a warning.
	Unsupported *Claim `yaml:"unsupported" json:"unsupported,omitempty"`
	Removed     *Claim `yaml:"removed" json:"removed,omitempty"`
	// MaxSeverity is the most a finding about the behaviour weighs, wherever it was seen:
	// a removal that leaves the objects relying on it working (a toleration of a taint no
	// node carries any more) is information, not a blocker.
	MaxSeverity string `yaml:"maxSeverity" json:"maxSeverity,omitempty"`
	// LiveMaxSeverity is the most a finding weighs about objects a live cluster holds:
	// validation the target tightens refuses a manifest applied anew (a blocker in CI) but
	// lets an existing object keep its value.
	LiveMaxSeverity string `yaml:"liveMaxSeverity" json:"liveMaxSeverity,omitempty"`
	Detail          string `yaml:"detail" json:"detail"`
	Remediation     string `yaml:"remediation" json:"remediation"`
}

// Severities, least first: what MaxSeverity and LiveMaxSeverity may name.
var severities = []string{"info", "warning", "blocker"}

// ProbeDecl is a probe.Spec as the YAML spells it (probe.Spec carries JSON names only).
type ProbeDecl struct {
	ID          string   `yaml:"id"`
	Kinds       []string `yaml:"kinds"`
	PodTemplate bool     `yaml:"podTemplate"`
	Path        string   `yaml:"path"`
	Match       string   `yaml:"match"`
	Values      bool     `yaml:"values"`
	// Equals, Prefixes and Unless narrow the probe to the values the behaviour is about
	// (a provisioner name, the Docker socket's path), so its count is exact.
	Equals   []string `yaml:"equals"`
	Prefixes []string `yaml:"prefixes"`
	Unless   []string `yaml:"unless"`
	// StrictInvalid narrows an IP ("ip") or CIDR ("cidr") field to the values Kubernetes'
	// strict validation refuses and its legacy one accepts.
	StrictInvalid string `yaml:"strictInvalid"`
}

// Spec is the declaration as the probe package reads it.
func (d ProbeDecl) Spec() probe.Spec { return probe.Spec(d) }

// Claim is a minor ("1.24") with the citations that say so.
type Claim struct {
	Version   string   `yaml:"version" json:"version"`
	Citations []string `yaml:"citations" json:"citations"`
}

// CompiledBehaviour is a behaviour as the rules read it: the probe named by the key of its
// observation in input.facts.probes ("kb/<probe id>"), and every citation of its claims in
// one list beside the per-claim ones.
type CompiledBehaviour struct {
	Behaviour
	Probe     string   `json:"probe,omitempty"`
	Citations []string `json:"citations"`
}

var versionRE = regexp.MustCompile(`^1\.(0|[1-9][0-9]*)$`)

// LoadBehaviours reads and validates every behaviours/*.yaml entry of fsys, keyed by id. An
// error lists every defect, each naming its file and field.
func LoadBehaviours(fsys fs.FS) (map[string]Behaviour, error) {
	entries, problems := loadAll(fsys, "behaviours/*.yaml", func(b *Behaviour) (string, []string) {
		return b.ID, validateBehaviour(*b)
	})
	problems = append(problems, crossCheckProbes(entries)...)
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("invalid behaviour registry:\n  %s", strings.Join(problems, "\n  "))
	}
	return entries, nil
}

func validateBehaviour(b Behaviour) []string {
	var p []string
	add := func(field, format string, args ...any) { p = append(p, field+": "+fmt.Sprintf(format, args...)) }
	if !idRE.MatchString(b.ID) {
		add("id", "%q is not a lowercase name", b.ID)
	}
	if b.Title == "" {
		add("title", "required")
	}
	if b.Detail == "" {
		add("detail", "required: say what breaks")
	}
	if b.Remediation == "" {
		add("remediation", "required")
	}
	switch {
	case b.Probe == nil && b.NodeRuntime == "":
		add("probe", "give a probe or a nodeRuntime")
	case b.Probe != nil && b.NodeRuntime != "":
		add("probe", "give a probe or a nodeRuntime, not both")
	case b.Probe != nil:
		if err := probe.Validate(b.Probe.Spec()); err != nil {
			add("probe", "%v", err)
		}
	default:
		if !idRE.MatchString(b.NodeRuntime) {
			add("nodeRuntime", "%q is not a runtime name such as docker", b.NodeRuntime)
		}
		if b.Removed == nil {
			add("removed", "required with nodeRuntime: nodes are judged against the removal")
		}
	}
	if b.RuntimeBefore != "" && b.NodeRuntime == "" {
		add("runtimeBefore", "only with nodeRuntime")
	}
	if b.RuntimeBefore != "" && !runtimeVersionRE.MatchString(b.RuntimeBefore) {
		add("runtimeBefore", "%q is not a runtime version such as 2.0", b.RuntimeBefore)
	}
	if b.Deprecated == nil && b.Removed == nil {
		add("deprecated", "at least one of deprecated and removed is required")
	}
	checkClaim(add, "deprecated", b.Deprecated)
	checkClaim(add, "unsupported", b.Unsupported)
	checkClaim(add, "removed", b.Removed)
	ordered := []struct {
		field string
		claim *Claim
	}{{"deprecated", b.Deprecated}, {"unsupported", b.Unsupported}, {"removed", b.Removed}}
	for i, later := range ordered {
		for _, earlier := range ordered[:i] {
			if earlier.claim != nil && later.claim != nil && versionRE.MatchString(earlier.claim.Version) &&
				versionRE.MatchString(later.claim.Version) && minorOf(later.claim.Version) < minorOf(earlier.claim.Version) {
				add(later.field+".version", "%s is before %s.version %s", later.claim.Version, earlier.field, earlier.claim.Version)
			}
		}
	}
	if b.Unsupported != nil && b.Removed == nil {
		add("unsupported", "only with removed: it says how long the behaviour still works unsupported")
	}
	for field, sev := range map[string]string{"maxSeverity": b.MaxSeverity, "liveMaxSeverity": b.LiveMaxSeverity} {
		if sev != "" && !slices.Contains(severities, sev) {
			add(field, "%q is not one of %s", sev, strings.Join(severities, ", "))
		}
	}
	if b.MaxSeverity != "" && b.LiveMaxSeverity != "" &&
		slices.Index(severities, b.LiveMaxSeverity) >= slices.Index(severities, b.MaxSeverity) {
		add("liveMaxSeverity", "%s caps nothing under maxSeverity %s", b.LiveMaxSeverity, b.MaxSeverity)
	}
	return p
}

var runtimeVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

func checkClaim(add func(string, string, ...any), field string, c *Claim) {
	if c == nil {
		return
	}
	if !versionRE.MatchString(c.Version) {
		add(field+".version", "%q is not a Kubernetes minor such as 1.24", c.Version)
	}
	if len(c.Citations) == 0 {
		add(field+".citations", "at least one citation URL is required")
	}
	for i, c := range c.Citations {
		if u, err := url.Parse(c); err != nil || u.Scheme != "https" || u.Host == "" {
			add(fmt.Sprintf("%s.citations[%d]", field, i), "%q is not an https URL", c)
		}
	}
}

func minorOf(v string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(v, "1."))
	return n
}

// crossCheckProbes refuses two entries declaring one probe id differently: the bundle
// declares each probe once.
func crossCheckProbes(entries map[string]Behaviour) []string {
	var p []string
	first := map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		s := entries[id].Probe
		if s == nil {
			continue
		}
		other, ok := first[s.ID]
		if !ok {
			first[s.ID] = id
			continue
		}
		if !probe.Equal(s.Spec(), entries[other].Probe.Spec()) {
			p = append(p, fmt.Sprintf("behaviours/%s.yaml: probe: %s is declared differently in behaviours/%s.yaml", id, s.ID, other))
		}
	}
	return p
}

// CompileBehaviours turns validated entries into the rules' data, keyed by id.
func CompileBehaviours(entries map[string]Behaviour) map[string]CompiledBehaviour {
	out := make(map[string]CompiledBehaviour, len(entries))
	for id, b := range entries {
		c := CompiledBehaviour{Behaviour: b, Citations: []string{}}
		if b.Probe != nil {
			c.Probe = "kb/" + b.Probe.ID
		}
		for _, claim := range []*Claim{b.Deprecated, b.Unsupported, b.Removed} {
			if claim == nil {
				continue
			}
			for _, u := range claim.Citations {
				if !slices.Contains(c.Citations, u) {
					c.Citations = append(c.Citations, u)
				}
			}
		}
		out[id] = c
	}
	return out
}

// BehaviourProbes are the probes the entries declare, each once, sorted by id, with their
// defaults spelled out: what the bundle asks collectors to observe.
func BehaviourProbes(entries map[string]Behaviour) []probe.Spec {
	byID := map[string]probe.Spec{}
	for _, b := range entries {
		if b.Probe != nil {
			byID[b.Probe.ID] = probe.Normal(b.Probe.Spec())
		}
	}
	out := make([]probe.Spec, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, byID[id])
	}
	return out
}
