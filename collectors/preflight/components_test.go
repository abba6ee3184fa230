package preflight

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// apiserver is a kubeadm static pod manifest, its apiVersion on line 1.
const apiserver = `apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-apiserver
    tier: control-plane
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=10.0.0.10
    - --authorization-mode=Node,RBAC
    - --etcd-servers=https://root:etcd-pass@127.0.0.1:2379
    - --feature-gates=StructuredAuthorizationConfiguration=true, RetryGenerateName=false,Broken=maybe
    - --oidc-client-secret=s3cr3t
    - --service-cluster-ip-range
    - 10.96.0.0/12
    - --v
    - "2"
    - --profiling
    - --enable-admission-plugins=NodeRestriction
    image: registry.k8s.io/kube-apiserver:v1.35.4
    name: kube-apiserver
`

func TestAControlPlaneStaticPodGivesItsFlagsAndGatesWithTheirLines(t *testing.T) {
	p := observeAll(t, []string{apiserver}, FromManifests())
	want := []inventory.Component{{
		Component: "kube-apiserver", Source: "static-pod",
		Object: inventory.ObjectRef{Kind: "Pod", Namespace: "kube-system", Name: "kube-apiserver", File: "m.yaml", Line: 1},
		FeatureGates: []inventory.FeatureGate{
			{Name: "RetryGenerateName", Value: false, Line: 16},
			{Name: "StructuredAuthorizationConfiguration", Value: true, Line: 16},
		},
		Flags: []inventory.Flag{
			{Name: "advertise-address", Line: 13},
			{Name: "authorization-mode", Value: "Node,RBAC", Line: 14},
			{Name: "etcd-servers", Line: 15},
			{Name: "feature-gates", Line: 16},
			{Name: "oidc-client-secret", Line: 17},
			{Name: "service-cluster-ip-range", Line: 18},
			{Name: "v", Value: "2", Line: 20},
			{Name: "profiling", Line: 22},
			{Name: "enable-admission-plugins", Value: "NodeRestriction", Line: 23},
		},
	}}
	if !reflect.DeepEqual(p.Components, want) {
		got, _ := json.MarshalIndent(p.Components, "", " ")
		t.Errorf("components\n%s", got)
	}
	if data, _ := json.Marshal(p); strings.Contains(string(data), "s3cr3t") || strings.Contains(string(data), "etcd-pass") {
		t.Errorf("a secret flag value was recorded: %s", data)
	}
}

func TestGatesOfADocumentFurtherDownAFileKeepTheirLines(t *testing.T) {
	// Two documents of one file, as the files collector hands the second: its text, the
	// line it starts on (after the separator) and its apiVersion's line.
	file := "# rendered\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\n" +
		"# Source: control-plane/scheduler.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\nspec:\n  containers:\n  - name: kube-scheduler\n    command: [kube-scheduler, --leader-elect=true]\n    args:\n    - --feature-gates\n    - SchedulerQueueingHints=true\n"
	second := file[strings.Index(file, "---\n")+4:]
	r := NewRecorder(FromManifests())
	obj := decode(t, second)
	r.ObserveIn(obj, inventory.ObjectRef{Name: "kube-scheduler", File: "cp.yaml", Line: 7}, []byte(second), 6)
	c := r.Section().Components
	want := `[{kube-scheduler static-pod {Pod  kube-scheduler cp.yaml 7  <nil>} [{SchedulerQueueingHints true 17}] [{leader-elect  14} {feature-gates  16}] 0 [] 0  <nil>}]`
	if got := fmt.Sprint(c); got != want {
		t.Errorf("components\n%s\nwant\n%s", got, want)
	}
}

func TestAContainerIsAComponentByItsBinaryOrKubeadmsLabels(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      string
	}{
		{
			name: "the binary's path names it",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: cm, namespace: kube-system}\nspec: {containers: [{name: x, command: [/usr/local/bin/kube-controller-manager, --use-service-account-credentials=true]}]}\n",
			want: "kube-controller-manager use-service-account-credentials=",
		},
		{
			name: "hyperkube's subcommand names it",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: old, namespace: kube-system}\nspec: {containers: [{name: x, command: [/hyperkube, apiserver, --insecure-port=0]}]}\n",
			want: "kube-apiserver insecure-port=",
		},
		{
			name: "without a command, the component label and container name name it",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: s, namespace: kube-system, labels: {component: kube-scheduler}}\nspec: {containers: [{name: kube-scheduler, args: [--bind-address=127.0.0.1]}]}\n",
			want: "kube-scheduler bind-address=",
		},
		{
			name: "a shell that starts it hides its flags",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: s, namespace: kube-system, labels: {component: kube-apiserver}}\nspec: {containers: [{name: kube-apiserver, command: [/bin/sh, -c, exec kube-apiserver --v=2]}]}\n",
		},
		{
			name: "a pod outside kube-system is not the control plane (a virtual cluster's apiserver)",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: vcluster-0, namespace: team-a}\nspec: {containers: [{name: syncer, command: [kube-apiserver, --v=2]}]}\n",
		},
		{
			name: "a pod a DaemonSet runs is left to the DaemonSet",
			doc:  "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-proxy-abcde, namespace: kube-system, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: kube-proxy, controller: true}]}\nspec: {containers: [{name: kube-proxy, command: [/usr/local/bin/kube-proxy, --config=/var/lib/kube-proxy/config.conf]}]}\n",
		},
		{
			name: "kube-proxy's DaemonSet gives its flags and mode",
			doc:  "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kube-proxy, namespace: kube-system}\nspec: {template: {metadata: {labels: {k8s-app: kube-proxy}}, spec: {containers: [{name: kube-proxy, command: [/usr/local/bin/kube-proxy, --proxy-mode=ipvs, --hostname-override=$(NODE_NAME)]}]}}}\n",
			want: "kube-proxy proxy-mode=ipvs hostname-override= mode=ipvs",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range observeAll(t, []string{tc.doc}).Components {
				s := c.Component
				for _, f := range c.Flags {
					s += " " + f.Name + "=" + f.Value
				}
				if c.ProxyMode != "" {
					s += " mode=" + c.ProxyMode
				}
				got = append(got, s)
			}
			if strings.Join(got, "; ") != tc.want {
				t.Errorf("components %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfigurationDocumentsGiveGatesModeAndCgroupSettingWithTheirLines(t *testing.T) {
	kubelet := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\nfeatureGates:\n  KubeletCgroupDriverFromCRI: true\n  DisableCPUQuotaWithExclusiveCPUs: false\n"
	proxy := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nfeatureGates: {NFTablesProxyMode: true}\n"
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-proxy\n  namespace: kube-system\ndata:\n  kubeconfig.conf: |-\n    apiVersion: v1\n    kind: Config\n  config.conf: |-\n    apiVersion: kubeproxy.config.k8s.io/v1alpha1\n    kind: KubeProxyConfiguration\n    featureGates:\n      IPVSMode: false\n    mode: nftables\n"
	p := observeAll(t, []string{kubelet, proxy, configMap}, FromManifests())
	var got []string
	for _, c := range p.Components {
		s := fmt.Sprintf("%s %s %s", c.Component, c.Source, c.Object.Kind)
		for _, g := range c.FeatureGates {
			s += fmt.Sprintf(" %s=%v@%d", g.Name, g.Value, g.Line)
		}
		if c.ProxyMode != "" {
			s += " mode=" + c.ProxyMode
		}
		if c.FailCgroupV1 != nil {
			s += fmt.Sprintf(" failCgroupV1=%v", *c.FailCgroupV1)
		}
		got = append(got, s)
	}
	want := []string{
		"kube-proxy config-file KubeProxyConfiguration NFTablesProxyMode=true@4 mode=ipvs",
		"kube-proxy configmap ConfigMap IPVSMode=false@14 mode=nftables",
		"kubelet config-file KubeletConfiguration DisableCPUQuotaWithExclusiveCPUs=false@6 KubeletCgroupDriverFromCRI=true@5 failCgroupV1=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("components\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLiveComponentsConfiguredAlikeAreOneEntryNamingTheirNodes(t *testing.T) {
	pod := func(node, flag string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver-%s, namespace: kube-system, annotations: {kubernetes.io/config.mirror: x}}\nspec: {nodeName: %s, containers: [{name: kube-apiserver, command: [kube-apiserver, %s]}]}\n", node, node, flag)
	}
	r := NewRecorder()
	for _, d := range []string{pod("cp-2", "--v=2"), pod("cp-1", "--v=2"), pod("cp-3", "--v=4")} {
		obj := decode(t, d)
		r.Observe(obj, refOf(obj, ""), nil)
	}
	r.ObserveKubeletConfigz(map[string]any{"featureGates": map[string]any{"A": true}}, inventory.ObjectRef{Kind: "Node", Name: "w-2"})
	r.ObserveKubeletConfigz(map[string]any{"featureGates": map[string]any{"A": true}}, inventory.ObjectRef{Kind: "Node", Name: "w-1"})
	var got []string
	for _, c := range r.Section().Components {
		got = append(got, fmt.Sprintf("%s %s %v %v", c.Component, c.Object.Name, c.Flags, c.Nodes))
	}
	want := []string{
		"kube-apiserver kube-apiserver-cp-1 [{v 2 0}] [cp-1 cp-2]",
		"kube-apiserver kube-apiserver-cp-3 [{v 4 0}] [cp-3]",
		"kubelet w-1 [] [w-1 w-2]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("components\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAComponentListsItsBoundOfFlags(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: kube-system}\nspec:\n  containers:\n  - name: a\n    command:\n    - kube-apiserver\n")
	for i := range inventory.MaxComponentSettings + 7 {
		fmt.Fprintf(&b, "    - --flag-%d=x\n", i)
	}
	c := observeAll(t, []string{b.String()}, FromManifests()).Components[0]
	if len(c.Flags) != inventory.MaxComponentSettings || c.Omitted != 7 || c.Flags[0].Line != 9 {
		t.Errorf("%d flags, %d omitted, the first on line %d; want %d, 7, 9", len(c.Flags), c.Omitted, c.Flags[0].Line, inventory.MaxComponentSettings)
	}
}

func TestOnlyTheValuesOfFlagsAnUpgradeIsJudgedByAreRecorded(t *testing.T) {
	for _, tc := range []struct {
		name, flag string
		want       inventory.Flag
	}{
		{"verbosity is kept", "--v=4", inventory.Flag{Name: "v", Value: "4"}},
		{"kube-proxy's mode is kept", "--proxy-mode=ipvs", inventory.Flag{Name: "proxy-mode", Value: "ipvs"}},
		{"the kubelet's cgroup driver is kept", "--cgroup-driver=cgroupfs", inventory.Flag{Name: "cgroup-driver", Value: "cgroupfs"}},
		{"the runtime endpoint is kept", "--container-runtime-endpoint=unix:///run/containerd/containerd.sock", inventory.Flag{Name: "container-runtime-endpoint", Value: "unix:///run/containerd/containerd.sock"}},
		{"an in-tree cloud provider is kept", "--cloud-provider=aws", inventory.Flag{Name: "cloud-provider", Value: "aws"}},
		{"the API versions served are kept", "--runtime-config=batch/v2alpha1=true", inventory.Flag{Name: "runtime-config", Value: "batch/v2alpha1=true"}},
		{"admission plugins are kept", "--enable-admission-plugins=NodeRestriction,PodSecurityPolicy", inventory.Flag{Name: "enable-admission-plugins", Value: "NodeRestriction,PodSecurityPolicy"}},
		{"a kept flag's URL with a user in it is not", "--container-runtime-endpoint=tcp://me:pw@host:1", inventory.Flag{Name: "container-runtime-endpoint"}},
		{"a token whose flag names no secret is not kept", "--etcd-prefix=hunter2", inventory.Flag{Name: "etcd-prefix"}},
		{"an address is not kept", "--advertise-address=10.0.0.10", inventory.Flag{Name: "advertise-address"}},
		{"an OIDC client secret is not kept", "--oidc-client-secret=s3cr3t", inventory.Flag{Name: "oidc-client-secret"}},
		{"feature gates are not kept as a value", "--feature-gates=A=true", inventory.Flag{Name: "feature-gates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := flags([]arg{{value: tc.flag}}, func(arg) int { return 0 })
			if !reflect.DeepEqual(got, []inventory.Flag{tc.want}) {
				t.Errorf("flags %+v, want %+v", got, tc.want)
			}
		})
	}
}
