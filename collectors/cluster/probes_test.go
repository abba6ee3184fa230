package cluster_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// probeSet is what the tests observe: the knowledge base's kind of probes, one of them on a
// custom resource kind no CRD serves.
func probeSet(t *testing.T) *probe.Set {
	t.Helper()
	specs := []probe.Spec{
		{ID: "host-path", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true},
		{ID: "no-limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: probe.MatchAbsent},
		{ID: "pod-host-path", Kinds: []string{"core/Pod"}, Path: "spec.volumes[*].hostPath.path", Values: true},
		{ID: "lb-ip", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP", Values: true},
		{ID: "provisioner", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "provisioner", Values: true},
		{ID: "ingress-class", Kinds: []string{"networking.k8s.io/Ingress"}, Path: `metadata.annotations["kubernetes.io/ingress.class"]`, Values: true},
		{ID: "ebs-volume", Kinds: []string{"core/PersistentVolume"}, Path: "spec.awsElasticBlockStore"},
		{ID: "widget-size", Kinds: []string{"widgets.example.com/Widget"}, Path: "spec.size"},
	}
	declared := make([]probe.Declared, len(specs))
	for i, s := range specs {
		declared[i] = probe.Declared{ID: "test/" + s.ID, Spec: s}
	}
	set, err := probe.NewSet(declared)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// seen is what one probe observed of the test's own objects: the difference from a
// collection before they were written, so that other tests' objects do not count.
type seen struct {
	Examined, Count int
	Objects         []string // "Kind name [values]"
	Values          map[string]int
}

func since(before, after inventory.Probe, ns, sfx string) seen {
	s := seen{Examined: after.Examined - before.Examined, Count: after.Count - before.Count, Values: map[string]int{}}
	for _, o := range after.Objects {
		if o.Namespace == ns || strings.HasSuffix(o.Name, "-"+sfx) {
			s.Objects = append(s.Objects, fmt.Sprintf("%s %s %v", o.Kind, strings.TrimSuffix(o.Name, "-"+sfx), o.Values))
		}
	}
	for _, v := range after.Values {
		s.Values[v.Value] += v.Count
	}
	for _, v := range before.Values {
		s.Values[v.Value] -= v.Count
	}
	maps.DeleteFunc(s.Values, func(_ string, n int) bool { return n == 0 })
	slices.Sort(s.Objects)
	return s
}

func byID(ps []inventory.Probe) map[string]inventory.Probe {
	out := map[string]inventory.Probe{}
	for _, p := range ps {
		out[strings.TrimPrefix(p.ID, "test/")] = p
	}
	return out
}

// The objects a user edits are observed once each: a Deployment's template at the
// Deployment, not again at its ReplicaSet and Pod, nor a CronJob's at its Job, while a static
// pod's mirror, which no workload controls, counts, and a probe naming Pods sees every Pod.
func TestProbesObserveEachPodTemplateOnceAtTheObjectAUserEdits(t *testing.T) {
	c := adminClient(t, envServer)
	col := collector(t, envServer, "admin")
	set := probeSet(t)
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	ns := "probes-" + sfx
	before := &inventory.Document{}
	col.Probes(ctx, before, set)

	writeProbedObjects(t, c, ns, sfx)
	doc := col.Collect(ctx, time.Now(), cluster.Options{StepTimeout: time.Minute, Observe: kb.Observe{Probes: set}})
	if _, ok := doc.Capabilities["probes"]; ok {
		t.Errorf("the probes step wrote a capability %+v; availability belongs to each probe", doc.Capabilities["probes"])
	}
	was, is := byID(before.Probes), byID(doc.Probes)
	docker := "/var/run/docker.sock"
	tests := []struct {
		probe string
		want  seen
	}{
		{"host-path", seen{Examined: 4, Count: 3,
			Objects: []string{"Deployment web [" + docker + "]", "Pod bare [/var/log]", "Pod kube-apiserver [/etc/kubernetes/pki]"},
			Values:  map[string]int{docker: 1, "/var/log": 1, "/etc/kubernetes/pki": 1}}},
		{"no-limits", seen{Examined: 4, Count: 2,
			Objects: []string{"CronJob nightly []", "Deployment web []"}, Values: map[string]int{}}},
		{"pod-host-path", seen{Examined: 3, Count: 3,
			Objects: []string{"Pod bare [/var/log]", "Pod kube-apiserver [/etc/kubernetes/pki]", "Pod web-6d4b-x7k2 [" + docker + "]"},
			Values:  map[string]int{docker: 1, "/var/log": 1, "/etc/kubernetes/pki": 1}}},
		{"lb-ip", seen{Examined: 1, Count: 1, Objects: []string{"Service web [203.0.113.10]"}, Values: map[string]int{"203.0.113.10": 1}}},
		{"provisioner", seen{Examined: 1, Count: 1,
			Objects: []string{"StorageClass probes-ebs [kubernetes.io/aws-ebs]"}, Values: map[string]int{"kubernetes.io/aws-ebs": 1}}},
		{"ingress-class", seen{Examined: 1, Count: 1, Objects: []string{"Ingress web [nginx]"}, Values: map[string]int{"nginx": 1}}},
		{"ebs-volume", seen{Values: map[string]int{}}},
		{"widget-size", seen{Values: map[string]int{}}},
	}
	for _, tt := range tests {
		t.Run(tt.probe, func(t *testing.T) {
			got := is[tt.probe]
			if !got.Available || got.Reason != "" {
				t.Errorf("available %v (%q), want available", got.Available, got.Reason)
			}
			if s := since(was[tt.probe], got, ns, sfx); !reflect.DeepEqual(s, tt.want) {
				t.Errorf("observed\n%+v\nwant\n%+v", s, tt.want)
			}
		})
	}
	if len(doc.Probes) != set.Len() {
		t.Errorf("%d observations, want one per probe (%d)", len(doc.Probes), set.Len())
	}
}

// With a pod pass every three collections, the probes see a Pod created after a pass at the
// next pass, not before, and pods are not listed in between: an unchanged cluster reads the
// same on every collection.
func TestProbesReuseTheLastPodPassBetweenPasses(t *testing.T) {
	c := adminClient(t, envServer)
	cfg := restConfig(t, envServer, "admin")
	listed := map[string]bool{}
	cfg.Wrap(recordGets(listed, "/api/v1/pods")) // every pod, not the control plane's
	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	mount := func(name string) string { return "/probes/" + sfx + "/" + name }
	pod := func(name string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probes-pass-" + name + "-" + sfx, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: mount(name)}}}}}}
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			zero := int64(0)
			_ = c.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
	}
	opts := cluster.Options{StepTimeout: time.Minute, PodPassEvery: 3, Observe: kb.Observe{Probes: probeSet(t)}}
	mounted := func(doc *inventory.Document) []string {
		var out []string
		for _, v := range byID(doc.Probes)["pod-host-path"].Values {
			if strings.HasPrefix(v.Value, mount("")) {
				out = append(out, v.Value)
			}
		}
		return out
	}

	pod("a")
	first := col.Collect(ctx, time.Now(), opts)
	if got, want := mounted(first), []string{mount("a")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the first collection is a pod pass and sees %q, want %q", got, want)
	}
	pod("b")
	for i := 2; i <= 3; i++ {
		clear(listed)
		doc := col.Collect(ctx, time.Now(), opts)
		if len(listed) > 0 || !reflect.DeepEqual(doc.Probes, first.Probes) {
			t.Errorf("collection %d listed %v and observed %q; want no pod list and the pass's observations", i, slices.Sorted(maps.Keys(listed)), mounted(doc))
		}
	}
	if got, want := mounted(col.Collect(ctx, time.Now(), opts)), []string{mount("a"), mount("b")}; !reflect.DeepEqual(got, want) {
		t.Errorf("the fourth collection is a pod pass and sees %q, want %q", got, want)
	}
}

// A kind no CRD serves has nothing to examine: the probe is available, having looked at
// nothing, and no list was attempted.
func TestAProbeOfACustomKindWithoutItsCRDIsAvailableHavingExaminedNothing(t *testing.T) {
	doc := &inventory.Document{}
	collector(t, envServer, "admin").Probes(context.Background(), doc, probeSet(t))
	got := byID(doc.Probes)["widget-size"]
	want := inventory.Probe{ID: "test/widget-size", Available: true,
		Probe: probe.Spec{ID: "widget-size", Kinds: []string{"widgets.example.com/Widget"}, Path: "spec.size", Match: probe.MatchPresent}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("observed %+v, want %+v", got, want)
	}
}

// A role that may list everything but StorageClasses leaves the StorageClass probe
// unavailable, saying so, and every other probe observed.
func TestAProbeOfAKindTheRoleCannotListIsUnavailableAndTheOthersAreObserved(t *testing.T) {
	c := adminClient(t, envServer)
	user := fmt.Sprintf("probe-reader-%d", time.Now().UnixNano()%1e6)
	grantAllButStorageClasses(t, c, user)
	cfg := rest.CopyConfig(restConfig(t, envServer, "admin"))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restricted := kubernetes.NewForConfigOrDie(cfg)
	// RBAC reaches the authorizer through an informer: wait until the grant is seen.
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := restricted.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s still cannot list pods: %v", user, err)
	}

	doc := &inventory.Document{}
	col.Probes(context.Background(), doc, probeSet(t))
	for _, p := range doc.Probes {
		id := strings.TrimPrefix(p.ID, "test/")
		if id == "provisioner" {
			if p.Available || !strings.Contains(p.Reason, "forbidden") || !strings.Contains(p.Reason, "storageclasses") {
				t.Errorf("%s: available %v, reason %q; want unavailable, forbidden to list storageclasses", id, p.Available, p.Reason)
			}
			continue
		}
		if !p.Available {
			t.Errorf("%s: unavailable (%s), want available", id, p.Reason)
		}
	}
	if len(doc.Probes) != probeSet(t).Len() {
		t.Errorf("%d observations, want one per probe", len(doc.Probes))
	}
}

// A user who may read nothing still discovers what is served: every probe of a served kind is
// unavailable, forbidden, and the probe of a kind nobody serves has nothing it could miss.
func TestProbesForAUserWhoCanReadNothingAreForbiddenButForAKindNotServed(t *testing.T) {
	doc := &inventory.Document{}
	collector(t, envServer, "viewer").Probes(context.Background(), doc, probeSet(t))
	if len(doc.Probes) != probeSet(t).Len() {
		t.Fatalf("%d observations, want one per probe", len(doc.Probes))
	}
	for _, p := range doc.Probes {
		if p.ID == "test/widget-size" {
			if !p.Available {
				t.Errorf("%s: unavailable (%s), want available", p.ID, p.Reason)
			}
			continue
		}
		if p.Available || !strings.Contains(p.Reason, "forbidden") {
			t.Errorf("%s: available %v, reason %q; want unavailable and forbidden", p.ID, p.Available, p.Reason)
		}
	}
}

// Without probes the step lists nothing and the document has no probes section; with
// probes and no cluster to ask, every probe says it was not observed.
func TestProbesWithoutAClusterAreUnavailableAndWithoutProbesNothingIsWritten(t *testing.T) {
	col, err := cluster.New(&rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, set := range []*probe.Set{nil, {}} {
		doc := &inventory.Document{}
		if n := col.Probes(ctx, doc, set); n != 0 || doc.Probes != nil {
			t.Errorf("set %v: %d examined, probes %+v; want nothing", set, n, doc.Probes)
		}
	}
	doc := &inventory.Document{}
	col.Probes(ctx, doc, probeSet(t))
	if len(doc.Probes) != probeSet(t).Len() {
		t.Fatalf("%d observations, want one per probe", len(doc.Probes))
	}
	for _, p := range doc.Probes {
		if p.Available || !strings.HasPrefix(p.Reason, "discovery: ") {
			t.Errorf("%s: available %v, reason %q; want unavailable for discovery", p.ID, p.Available, p.Reason)
		}
	}
}

// writeProbedObjects writes, in a new namespace, the objects the probes look for: a
// Deployment mounting the Docker socket with a ReplicaSet and a Pod made from it (as the
// controllers would), a bare Pod, a static pod's mirror, a CronJob with a Job of its own, a Service with a
// loadBalancerIP, an Ingress with the class annotation, and a StorageClass on the in-tree EBS
// provisioner. Each is deleted at the end: no namespace controller runs.
func writeProbedObjects(t *testing.T, c kubernetes.Interface, ns, sfx string) {
	t.Helper()
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	background := metav1.DeletePropagationBackground
	zero := int64(0)
	del := metav1.DeleteOptions{PropagationPolicy: &background, GracePeriodSeconds: &zero}
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, del) })

	labels := map[string]string{"app": "web"}
	dockerSocket := corev1.Volume{Name: "docker", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/run/docker.sock"}}}
	webPod := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/web:1"}}, Volumes: []corev1.Volume{dockerSocket}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: webPod}
	controller := func(apiVersion, kind string, owner metav1.Object) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes}}
	}

	deploy, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.AppsV1().Deployments(ns).Delete(context.Background(), "web", del) })
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-6d4b", OwnerReferences: controller("apps/v1", "Deployment", deploy)},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.AppsV1().ReplicaSets(ns).Delete(context.Background(), rs.Name, del) })
	_, err = c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-6d4b-x7k2", Labels: labels, OwnerReferences: controller("apps/v1", "ReplicaSet", rs)},
		Spec:       webPod}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.CoreV1().Pods(ns).Delete(context.Background(), "web-6d4b-x7k2", del) })

	// Pods with limits, so that on a cluster of many Pods without them (make bench-live's) the
	// Deployment and CronJob, listed before Pods, are the objects no-limits lists.
	limited := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	// A static pod's mirror: its Node controls it, and no template the probes see is its own.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "probes-node-" + sfx, UID: "8f0c3a52-0d7e-4c4b-9a57-3b8e2f6d1c90"}}
	_, err = c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver", OwnerReferences: controller("v1", "Node", node),
			Annotations: map[string]string{"kubernetes.io/config.mirror": "0d8e"}},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.35.4", Resources: limited}},
			Volumes: []corev1.Volume{{Name: "pki", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes/pki"}}}}}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.CoreV1().Pods(ns).Delete(context.Background(), "kube-apiserver", del) })

	_, err = c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "debug", Image: "example.com/debug:1", Resources: limited}},
			Volumes: []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}}}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.CoreV1().Pods(ns).Delete(context.Background(), "bare", del) })

	jobSpec := batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
		Containers: []corev1.Container{{Name: "report", Image: "example.com/report:1"}}}}}
	cron, err := c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: jobSpec}}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.BatchV1().CronJobs(ns).Delete(context.Background(), "nightly", del) })
	_, err = c.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29000000", OwnerReferences: controller("batch/v1", "CronJob", cron)},
		Spec:       jobSpec}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.BatchV1().Jobs(ns).Delete(context.Background(), "nightly-29000000", del) })

	_, err = c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: "203.0.113.10", Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.CoreV1().Services(ns).Delete(context.Background(), "web", del) })
	_, err = c.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.NetworkingV1().Ingresses(ns).Delete(context.Background(), "web", del) })
	sc := "probes-ebs-" + sfx
	_, err = c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: sc},
		Provisioner: "kubernetes.io/aws-ebs"}, metav1.CreateOptions{})
	check(err)
	t.Cleanup(func() { _ = c.StorageV1().StorageClasses().Delete(context.Background(), sc, del) })
}

// grantAllButStorageClasses lets user list every resource of the probes' groups but
// StorageClasses (RBAC only grants, so the other storage resources are named).
func grantAllButStorageClasses(t *testing.T, c kubernetes.Interface, user string) {
	t.Helper()
	ctx := context.Background()
	name := "probes-test-" + user
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "batch", "networking.k8s.io", "widgets.example.com"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"csidrivers", "csinodes", "csistoragecapacities", "volumeattachments", "volumeattributesclasses"}, Verbs: []string{"get", "list"}},
	}
	_, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
