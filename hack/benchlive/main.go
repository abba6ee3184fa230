// Command benchlive fills the real API server of hack/with-kube.sh with a synthetic cluster
// (500 Helm releases, 200 namespaces, 5,000 objects at a deprecated API, 2,000 pods, 200
// nodes, and what the pre-flight steps read at a large cluster's shape: 100
// PodDisruptionBudgets, 8 webhook configurations of 2 webhooks each, 2 CRDs converting
// through webhooks, the services they call with EndpointSlices, control-plane static pods
// and kube-proxy) and measures `upgradescope scan` on it: wall time, API requests and peak
// RSS; one collection as a process of its own, with and without the knowledge base's
// probes; then the requests of a first and a steady collection in one process (the agent's
// ticks).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/kb/probe"
)

func main() {
	bin := flag.String("bin", "bin/upgradescope", "the binary to measure")
	collect := flag.String("collect", "", `collect once and report, as the child the bench measures: "plain" or "probes"`)
	flag.Parse()
	var err error
	if *collect != "" {
		err = collectOnce(*collect == "probes")
	} else {
		err = run(*bin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchlive:", err)
		os.Exit(1)
	}
}

// adminConfig is the admin context of the API server's kubeconfig.
func adminConfig() (kubeconfig string, cfg *rest.Config, err error) {
	kubeconfig = os.Getenv("UPGRADESCOPE_KUBECONFIG")
	if kubeconfig == "" {
		return "", nil, fmt.Errorf("UPGRADESCOPE_KUBECONFIG is not set: run under hack/with-kube.sh")
	}
	cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "admin"}).ClientConfig()
	if err != nil {
		return "", nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return kubeconfig, cfg, nil
}

func run(bin string) error {
	kubeconfig, cfg, err := adminConfig()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := populate(context.Background(), cfg); err != nil {
		return err
	}
	if err := populatePreflight(context.Background(), cfg); err != nil {
		return err
	}
	fmt.Printf("populated in %.1f s\n\n", time.Since(start).Seconds())

	cmd := exec.Command(bin, "scan", "--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.37",
		"--fail-on", "never", "-o", "json", "--count-requests")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = nil, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scan: %v: %s", err, stderr.String())
	}
	wall := time.Since(t0)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Println("| scan | wall | CPU (user+sys) | peak RSS | API requests |")
	fmt.Println("|---|---:|---:|---:|---:|")
	fmt.Printf("| upgradescope scan --target 1.37 | %.2f s | %.2f s | %d MiB | %s |\n", wall.Seconds(),
		time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), ru.Maxrss/1024, strings.TrimSpace(strings.TrimPrefix(lastLine(stderr.String()), "api requests:")))
	if err := collections(); err != nil {
		return err
	}
	return ticks(cfg)
}

// collections measures one collection as a process of its own (this command as a child), so
// that its peak RSS is the collection's: without probes, then with the knowledge base's.
func collections() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Println("\n| one collection (a process of its own) | wall | CPU (user+sys) | peak RSS | API requests | objects probed |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, mode := range []string{"plain", "probes"} {
		cmd := exec.Command(self, "-collect", mode)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("collect %s: %v: %s", mode, err, stderr.String())
		}
		wall := time.Since(t0)
		var requests, examined int
		if _, err := fmt.Sscanf(stdout.String(), "%d requests, %d objects probed", &requests, &examined); err != nil {
			return fmt.Errorf("collect %s said %q: %v", mode, stdout.String(), err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		fmt.Printf("| %s | %.2f s | %.2f s | %d MiB | %d | %d |\n", map[string]string{"plain": "without probes", "probes": "with the kb's probes"}[mode],
			wall.Seconds(), time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), ru.Maxrss/1024, requests, examined)
	}
	return nil
}

// collectOnce is the child of collections: one collection, then its requests and the
// objects its probes examined on stdout.
func collectOnce(withProbes bool) error {
	_, cfg, err := adminConfig()
	if err != nil {
		return err
	}
	eng, err := engine.New(context.Background())
	if err != nil {
		return err
	}
	var probes *probe.Set
	if withProbes {
		probes = eng.Observe().Probes
	}
	var n atomic.Int64
	cfg.Wrap(countRequests(&n))
	col, err := cluster.New(cfg)
	if err != nil {
		return err
	}
	opts := collectOptions(eng, probes)
	examined := 0
	opts.Progress = func(s cluster.Step) {
		if s.Done && s.Name == "probes" {
			examined = s.Found
		}
	}
	col.Collect(context.Background(), time.Now(), opts)
	fmt.Printf("%d requests, %d objects probed\n", n.Load(), examined)
	return nil
}

// collectOptions are the agent's options for eng, with probes (nil for none).
func collectOptions(eng *engine.Engine, probes *probe.Set) cluster.Options {
	var flagged []cluster.FlaggedKind
	for _, a := range eng.KB().FlaggedAPIs() {
		flagged = append(flagged, cluster.FlaggedKind{Group: a.Group, Version: a.Version, Kind: a.Kind, Removed: a.Removed})
	}
	// The agent's default --pod-pass-every 3: ticks 1 and 4 list pods, 2 and 3 reuse them.
	observe := eng.Observe()
	observe.Probes = probes
	return cluster.Options{Flagged: flagged, TeamLabel: "team", StepTimeout: time.Minute, PodPassEvery: 3, Observe: observe}
}

func countRequests(n *atomic.Int64) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) { n.Add(1); return rt.RoundTrip(r) })
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// ticks collects twice with one collector, as the agent does, and counts requests.
func ticks(base *rest.Config) error {
	eng, err := engine.New(context.Background())
	if err != nil {
		return err
	}
	probes := eng.Observe().Probes
	var n atomic.Int64
	cfg := rest.CopyConfig(base)
	cfg.Wrap(countRequests(&n))
	col, err := cluster.New(cfg)
	if err != nil {
		return err
	}
	opts := collectOptions(eng, probes)
	fmt.Println("\n| collection in one process (--pod-pass-every 3, the kb's probes) | wall | API requests |")
	fmt.Println("|---|---:|---:|")
	for _, name := range []string{"first tick", "steady tick, pods reused", "steady tick, pods reused", "steady tick, pod pass"} {
		n.Store(0)
		t0 := time.Now()
		col.Collect(context.Background(), time.Now(), opts)
		fmt.Printf("| %s | %.2f s | %d |\n", name, time.Since(t0).Seconds(), n.Load())
	}
	return nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// populate creates the synthetic cluster once; a second run finds it in place.
func populate(ctx context.Context, cfg *rest.Config) error {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, "bench-199", metav1.GetOptions{}); err == nil {
		return nil
	}
	for i := range 200 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%03d", i), Labels: map[string]string{"team": fmt.Sprintf("team-%02d", i%20)}}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range 200 {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-node-%03d", i)}}
		created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status.NodeInfo.KubeletVersion = fmt.Sprintf("v1.%d.3", 32+i%4)
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	images := []string{"registry.k8s.io/ingress-nginx/controller:v1.9.4", "quay.io/jetstack/cert-manager-controller:v1.13.2", "registry.example.com/shop/app:1.0"}
	for i := range 2000 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: fmt.Sprintf("bench-%03d", i%200)},
			Spec:       corev1.PodSpec{NodeName: fmt.Sprintf("bench-node-%03d", i%200), Containers: []corev1.Container{{Name: "c", Image: images[i%len(images)]}}},
		}
		if _, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range 5000 {
		v := &storagev1beta1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-vac-%04d", i)}, DriverName: "csi.example.com", Parameters: map[string]string{"iops": "100"}}
		if _, err := c.StorageV1beta1().VolumeAttributesClasses().Create(ctx, v, metav1.CreateOptions{FieldManager: "legacy-operator"}); err != nil {
			return err
		}
	}
	manifest := strings.Repeat("---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: app:1}]\n", 20)
	for i := range 500 {
		ns := fmt.Sprintf("bench-%03d", i%200)
		rel := &releasev1.Release{
			Name: fmt.Sprintf("release-%03d", i), Namespace: ns, Version: 1,
			Info:     &releasev1.Info{Status: common.StatusDeployed},
			Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0", AppVersion: "1.0.0", KubeVersion: ">=1.21.0-0"}},
			Manifest: manifest,
		}
		if err := driver.NewSecrets(c.CoreV1().Secrets(ns)).Create(fmt.Sprintf("sh.helm.release.v1.%s.v1", rel.Name), rel); err != nil {
			return err
		}
	}
	return nil
}
