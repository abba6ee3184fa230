package rehearsal_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/rehearsal"
)

const changedJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "busybox:1.37"}]
`

// On a test cluster the rehearsal writes nothing but the namespaces it lacks, and removes
// them after; an object that exists there is judged as an update, so an immutable field a
// schema check cannot know about is refused.
func TestATestClusterRefusesAChangeToAnImmutableFieldAndKeepsNothingOfTheRehearsal(t *testing.T) {
	path := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cs, err := kubernetes.NewForConfig(kubetest.Config(t, kubetest.EnvServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The test server runs no namespace controller: a deleted namespace stays Terminating, so
	// every run takes names of its own.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rehearse-immutable-" + run}}
	missing := "rehearse-missing-" + run
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNamespace(cs, ns.Name); removeNamespace(cs, missing) })
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns.Name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "busybox:1.36"}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs(ns.Name).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	srv, err := rehearsal.Connect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := rehearsal.Replay(ctx, srv, []rehearsal.Object{
		obj(t, "job.yaml", 1, strings.ReplaceAll(changedJob, "NS", ns.Name)),
		obj(t, "new.yaml", 1, strings.ReplaceAll(goodConfigMap, "rehearse-shop", missing)),
	}, nil, rehearsal.Options{Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sec.Rejections) != 1 || sec.Rejections[0].Kind != "Job" || sec.Rejections[0].Reason != "Invalid" ||
		!strings.Contains(sec.Rejections[0].Message, "field is immutable") || sec.Accepted != 1 || sec.Server != rehearsal.ServerKubeconfig {
		t.Errorf("section %+v, want the Job refused as immutable and the ConfigMap accepted", sec)
	}
	created, err := cs.CoreV1().Namespaces().Get(ctx, missing, metav1.GetOptions{})
	if err != nil || created.Labels[rehearsal.RehearsalLabel] != "true" {
		t.Errorf("the missing namespace: %v, labels %v; want it created with %s", err, created.Labels, rehearsal.RehearsalLabel)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := cs.CoreV1().Namespaces().Get(ctx, missing, metav1.GetOptions{}); !apierrors.IsNotFound(err) && got.DeletionTimestamp == nil {
		t.Errorf("the namespace the rehearsal created is still there after Close: %v", err)
	}
	if got, err := cs.BatchV1().Jobs(ns.Name).Get(ctx, "migrate", metav1.GetOptions{}); err != nil || got.Spec.Template.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("the Job changed: %v %v", err, got)
	}
}

func TestTheClusterBeingScannedIsNeverARehearsalServer(t *testing.T) {
	path := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cs, err := kubernetes.NewForConfig(kubetest.Config(t, kubetest.EnvServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := cs.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rehearsal.Connect(context.Background(), path, rehearsal.NotCluster(string(ks.UID)))
	if err == nil || !strings.Contains(err.Error(), "it is the cluster being scanned") {
		t.Errorf("Connect = %v, want a refusal naming the scanned cluster", err)
	}
	_, err = rehearsal.Connect(context.Background(), path, rehearsal.NotCluster(""))
	if err == nil || !strings.Contains(err.Error(), "cannot be told apart") {
		t.Errorf("Connect while the scanned cluster's id is unknown = %v, want a refusal", err)
	}
	if srv, err := rehearsal.Connect(context.Background(), path, rehearsal.NotCluster("another-uid")); err != nil {
		t.Errorf("Connect to another cluster = %v", err)
	} else if err := srv.CheckTarget("1.37"); err == nil || !strings.Contains(err.Error(), "not the target 1.37") {
		t.Errorf("CheckTarget(1.37) on a 1.35 server = %v, want a refusal", err)
	}
}

// removeNamespace deletes a namespace and clears its finalizer, which the namespace controller
// the test server does not run would clear, so nothing of the test stays behind.
func removeNamespace(cs kubernetes.Interface, name string) {
	ctx := context.Background()
	_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	ns.Spec.Finalizers = nil
	_, _ = cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
}

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// On a test cluster the rehearsal creates what the objects need and the cluster lacks; when
// someone else creates the same object between its check and its create, that object is
// someone else's: the rehearsal neither takes over its fields nor deletes it on Close. The
// test is that someone, creating each object as the rehearsal's check answers 404.
func TestWhatAnotherCreatesAfterTheRehearsalsCheckStaysTheirs(t *testing.T) {
	path := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cs, err := kubernetes.NewForConfig(kubetest.Config(t, kubetest.EnvServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "polish-race-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	theirs := map[string]string{"owner": "someone-else"}
	others := map[string]func() error{
		"/api/v1/namespaces/" + name: func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: theirs}}, metav1.CreateOptions{})
			return err
		},
		"/apis/scheduling.k8s.io/v1/priorityclasses/" + name: func() error {
			pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: theirs}, Value: 1000}
			_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
			return err
		},
	}
	t.Cleanup(func() {
		_ = cs.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		removeNamespace(cs, name)
	})
	srv, err := rehearsal.Connect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	srv.Config.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			mu.Lock()
			defer mu.Unlock()
			if create, ok := others[req.URL.Path]; ok && err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusNotFound {
				delete(others, req.URL.Path)
				if cerr := create(); cerr != nil {
					t.Errorf("create %s as someone else: %v", req.URL.Path, cerr)
				}
			}
			return resp, err
		})
	}
	sec, err := rehearsal.Replay(ctx, srv, []rehearsal.Object{
		obj(t, "app.yaml", 1, strings.ReplaceAll(goodConfigMap, "rehearse-shop", name)),
		obj(t, "app.yaml", 6, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "+name+"}\nvalue: 1000"),
	}, nil, rehearsal.Options{Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if len(others) != 0 {
		t.Fatalf("the rehearsal never checked %v", others)
	}
	if sec.Accepted != 2 || len(sec.Rejections)+len(sec.NotReplayed) != 0 {
		t.Errorf("accepted %d, refused %+v, not replayed %+v; want both accepted, the PriorityClass as an update", sec.Accepted, sec.Rejections, sec.NotReplayed)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("their namespace after Close: %v, %+v; want it kept", err, ns)
	}
	pc, err := cs.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("their PriorityClass after Close: %v; want it kept", err)
	}
	for what, meta := range map[string]metav1.ObjectMeta{"namespace": ns.ObjectMeta, "PriorityClass": pc.ObjectMeta} {
		if _, ours := meta.Labels[rehearsal.RehearsalLabel]; ours || meta.Labels["owner"] != "someone-else" {
			t.Errorf("their %s's labels %v, want theirs only", what, meta.Labels)
		}
		for _, m := range meta.ManagedFields {
			if m.Manager == rehearsal.DefaultFieldManager {
				t.Errorf("their %s has fields managed by %s: %+v", what, m.Manager, m)
			}
		}
	}
}
