package registry

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestTheShippedNodeFactsValidate(t *testing.T) {
	f, err := LoadNodeFacts(NodeFiles)
	if err != nil {
		t.Fatal(err)
	}
	if f.CgroupV1.Refused.Version != "1.35" || f.CgroupV1.Kernel.Minimum != "5.8" || f.KubeProxyIPVS.Deprecated.Version != "1.35" {
		t.Errorf("node facts = %+v, want cgroup v1 refused at 1.35 below Linux 5.8 and ipvs deprecated at 1.35", f)
	}
}

// The OS image patterns read the release the way node status spells it (osImage is the
// node's PRETTY_NAME), and leave images of other families alone.
func TestTheOSImagePatternsReadTheReleaseOfRealImages(t *testing.T) {
	f, err := LoadNodeFacts(NodeFiles)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"Ubuntu 20.04.6 LTS":                                    {"Ubuntu", "20.04"},
		"Ubuntu 22.04.5 LTS":                                    {"Ubuntu", "22.04"},
		"Debian GNU/Linux 10 (buster)":                          {"Debian GNU/Linux", "10"},
		"Fedora 30 (Server Edition)":                            {"Fedora", "30"},
		"Fedora Linux 39 (Server Edition)":                      {"Fedora", "39"},
		"CentOS Linux 7 (Core)":                                 {"RHEL and RHEL-like distributions", "7"},
		"Red Hat Enterprise Linux 8.10 (Ootpa)":                 {"RHEL and RHEL-like distributions", "8"},
		"Rocky Linux 9.4 (Blue Onyx)":                           {"RHEL and RHEL-like distributions", "9"},
		"Amazon Linux 2":                                        {"Amazon Linux", "2"},
		"Amazon Linux 2023.6.20241121":                          {"Amazon Linux", "2023"},
		"Red Hat Enterprise Linux CoreOS 418.94.202501221327-0": {},
		"Fedora CoreOS 40.20240906.3.0":                         {},
		"Container-Optimized OS from Google":                    {},
		"Bottlerocket OS 1.26.2 (aws-k8s-1.31)":                 {},
		"Windows Server 2022 Datacenter":                        {},
	}
	for image, w := range want {
		var got [2]string
		for _, o := range f.CgroupV1.OSImages {
			if m := regexp.MustCompile(o.Match).FindStringSubmatch(image); m != nil {
				got = [2]string{o.Name, m[1]}
				break
			}
		}
		if got != w {
			t.Errorf("%q read as %q, want %q", image, got, w)
		}
	}
}

func TestInvalidNodeFactsAreRefusedNamingTheField(t *testing.T) {
	good, err := NodeFiles.ReadFile(NodeFactsFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ from, to, want string }{
		"an unknown field":               {"cgroupV1:\n", "cgroupV1:\n  since: \"1.35\"\n", "field since not found"},
		"a kernel that is no version":    {`minimum: "5.8"`, `minimum: "five"`, `cgroupV1.kernel.minimum: "five" is not a kernel version`},
		"a pattern without its group":    {`'^Debian GNU/Linux ([0-9]+)'`, `'^Debian GNU/Linux [0-9]+'`, "cgroupV1.osImages[1].match"},
		"a pattern that does not parse":  {`'^Debian GNU/Linux ([0-9]+)'`, `'^Debian ([0-9]+'`, "cgroupV1.osImages[1].match: error parsing regexp"},
		"an unanchored pattern":          {`'^Ubuntu ([0-9]+\.[0-9]+)'`, `'Ubuntu ([0-9]+\.[0-9]+)'`, "must be anchored"},
		"a release that is no release":   {`cgroupV2From: "21.10"`, `cgroupV2From: "jammy"`, `cgroupV1.osImages[0].cgroupV2From: "jammy" is not a release`},
		"an uncited image":               {"      citations: [https://docs.aws.amazon.com/linux/al2023/ug/cgroupv2.html]", "      citations: []", "cgroupV1.osImages[4].citations: at least one citation URL is required"},
		"stages out of order":            {`version: "1.43"`, `version: "1.39"`, "kubeProxyIPVS: deprecated 1.35, gateOff 1.40 and removed 1.39 are out of order"},
		"a gate that is no gate name":    {"gate: KubeProxyIPVS", "gate: kube-proxy-ipvs", `kubeProxyIPVS.gate: "kube-proxy-ipvs" is not a feature gate name`},
		"a refusal with a patch version": {`version: "1.35"` + "\n    citations:\n      - https://github.com/kubernetes/enhancements/blob/master/keps/sig-node", `version: "1.35.0"` + "\n    citations:\n      - https://github.com/kubernetes/enhancements/blob/master/keps/sig-node", `cgroupV1.refused.version: "1.35.0" is not a Kubernetes minor`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			text := strings.Replace(string(good), tt.from, tt.to, 1)
			if text == string(good) {
				t.Fatalf("the test's edit %q matched nothing", tt.from)
			}
			_, err := LoadNodeFacts(fstest.MapFS{NodeFactsFile: &fstest.MapFile{Data: []byte(text)}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), NodeFactsFile) {
				t.Errorf("LoadNodeFacts = %v, want an error naming %s and containing %q", err, NodeFactsFile, tt.want)
			}
		})
	}
}
