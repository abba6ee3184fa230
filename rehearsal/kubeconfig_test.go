package rehearsal_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

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
