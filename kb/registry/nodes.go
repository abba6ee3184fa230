package registry

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// NodeFactsFile is the document in NodeFiles holding what the node runtime pack judges
// nodes by: when the kubelet refuses cgroup v1, what cgroup v2 needs, which OS images boot
// cgroup v1 by default, and the plan for kube-proxy's ipvs mode. Every claim is cited.
const NodeFactsFile = "nodes/node-facts.yaml"

// NodeFiles holds the node facts.
//
//go:embed nodes/*.yaml
var NodeFiles embed.FS

// NodeFacts are the node runtime and OS facts, compiled as they are read.
type NodeFacts struct {
	CgroupV1      CgroupV1      `yaml:"cgroupV1" json:"cgroupV1"`
	KubeProxyIPVS KubeProxyMode `yaml:"kubeProxyIPVS" json:"kubeProxyIPVS"`
}

// CgroupV1 is the kubelet's refusal of cgroup v1 nodes and the evidence a node shows of
// running cgroup v1: node status does not say which cgroup version a node runs.
type CgroupV1 struct {
	// Refused is the minor from which the kubelet refuses to start on cgroup v1 unless its
	// configuration sets failCgroupV1: false.
	Refused Claim `yaml:"refused" json:"refused"`
	// Kernel is the oldest Linux kernel cgroup v2 supports: an older one runs cgroup v1.
	Kernel KernelMinimum `yaml:"kernel" json:"kernel"`
	// OSImages are the distributions that boot cgroup v2 by default only from a release on:
	// a node of an older release likely runs cgroup v1.
	OSImages []OSImage `yaml:"osImages" json:"osImages"`
}

// KernelMinimum is a Linux kernel version ("5.8") with the citations that set it.
type KernelMinimum struct {
	Minimum   string   `yaml:"minimum" json:"minimum"`
	Citations []string `yaml:"citations" json:"citations"`
}

// OSImage is a distribution as node status names it (osImage, /etc/os-release's
// PRETTY_NAME): Match is a regular expression whose first group is the release, and
// CgroupV2From the first release that boots cgroup v2 by default.
type OSImage struct {
	Name         string   `yaml:"name" json:"name"`
	Match        string   `yaml:"match" json:"match"`
	CgroupV2From string   `yaml:"cgroupV2From" json:"cgroupV2From"`
	Citations    []string `yaml:"citations" json:"citations"`
}

// KubeProxyMode is the lifecycle of one kube-proxy mode: deprecated, then turned off by
// default behind a feature gate the operator can still enable, then removed.
type KubeProxyMode struct {
	Mode       string `yaml:"mode" json:"mode"`
	Deprecated Claim  `yaml:"deprecated" json:"deprecated"`
	// Gate keeps the mode working once it is off by default (GateOff), until Removed.
	Gate    string `yaml:"gate" json:"gate"`
	GateOff Claim  `yaml:"gateOff" json:"gateOff"`
	Removed Claim  `yaml:"removed" json:"removed"`
}

var (
	releaseRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
	gateRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`)
)

// LoadNodeFacts reads and validates NodeFactsFile of fsys. An error lists every defect,
// each naming the field.
func LoadNodeFacts(fsys fs.FS) (NodeFacts, error) {
	var facts NodeFacts
	if err := decodeStrict(fsys, NodeFactsFile, &facts); err != nil {
		return facts, err
	}
	if problems := validateNodeFacts(facts); len(problems) > 0 {
		sort.Strings(problems)
		return facts, fmt.Errorf("invalid node facts:\n  %s: %s", NodeFactsFile, strings.Join(problems, "\n  "+NodeFactsFile+": "))
	}
	return facts, nil
}

func validateNodeFacts(f NodeFacts) []string {
	var p []string
	add := func(field, format string, args ...any) { p = append(p, field+": "+fmt.Sprintf(format, args...)) }
	required := func(field string, c Claim) {
		if c.Version == "" && len(c.Citations) == 0 {
			add(field, "required")
			return
		}
		checkClaim(add, field, &c)
	}
	cg := f.CgroupV1
	required("cgroupV1.refused", cg.Refused)
	if !releaseRE.MatchString(cg.Kernel.Minimum) || !strings.Contains(cg.Kernel.Minimum, ".") {
		add("cgroupV1.kernel.minimum", "%q is not a kernel version such as 5.8", cg.Kernel.Minimum)
	}
	checkCitations(add, "cgroupV1.kernel.citations", cg.Kernel.Citations)
	if len(cg.OSImages) == 0 {
		add("cgroupV1.osImages", "at least one is required")
	}
	for i, o := range cg.OSImages {
		field := fmt.Sprintf("cgroupV1.osImages[%d]", i)
		if o.Name == "" {
			add(field+".name", "required")
		}
		re, err := regexp.Compile(o.Match)
		switch {
		case err != nil:
			add(field+".match", "%v", err)
		case re.NumSubexp() != 1 || !strings.HasPrefix(o.Match, "^"):
			add(field+".match", "%q must be anchored with ^ and have one group, the release", o.Match)
		}
		if !releaseRE.MatchString(o.CgroupV2From) {
			add(field+".cgroupV2From", "%q is not a release such as 21.10", o.CgroupV2From)
		}
		checkCitations(add, field+".citations", o.Citations)
	}
	kp := f.KubeProxyIPVS
	if kp.Mode == "" {
		add("kubeProxyIPVS.mode", "required")
	}
	if !gateRE.MatchString(kp.Gate) {
		add("kubeProxyIPVS.gate", "%q is not a feature gate name", kp.Gate)
	}
	required("kubeProxyIPVS.deprecated", kp.Deprecated)
	required("kubeProxyIPVS.gateOff", kp.GateOff)
	required("kubeProxyIPVS.removed", kp.Removed)
	if versionRE.MatchString(kp.Deprecated.Version) && versionRE.MatchString(kp.GateOff.Version) && versionRE.MatchString(kp.Removed.Version) &&
		!(minorOf(kp.Deprecated.Version) <= minorOf(kp.GateOff.Version) && minorOf(kp.GateOff.Version) <= minorOf(kp.Removed.Version)) {
		add("kubeProxyIPVS", "deprecated %s, gateOff %s and removed %s are out of order", kp.Deprecated.Version, kp.GateOff.Version, kp.Removed.Version)
	}
	return p
}
