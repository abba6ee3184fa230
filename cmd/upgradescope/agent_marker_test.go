package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// TestAgentMarksTheObjectWhileItCannotWriteTheStatus runs the agent as a service account that
// may read the cluster and write ClusterReadiness objects but not their status (a fault RBAC
// really produces): the object carries the status-error annotation with the reason. Once the
// role allows status, the next tick writes it and clears the marker. Logs are JSON lines.
func TestAgentMarksTheObjectWhileItCannotWriteTheStatus(t *testing.T) {
	admin := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	cs := kubernetes.NewForConfigOrDie(cfg)
	objects := dynamic.NewForConfigOrDie(cfg).Resource(crd.GVR)
	ctx := context.Background()
	if err := crd.Apply(ctx, dynamic.NewForConfigOrDie(cfg)); err != nil {
		t.Fatal(err)
	}
	const name, ns = "marker-e2e", "upgradescope-marker-e2e"
	_ = objects.Delete(ctx, name, metav1.DeleteOptions{})
	kubeconfig := serviceAccountKubeconfig(t, cs, admin, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}},
		{NonResourceURLs: []string{"/version", "/metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{crd.Group}, Resources: []string{"clusterreadinesses"}, Verbs: []string{"get", "create", "patch"}},
	})
	logs := startAgent(t, kubeconfig, "--cr-name", name, "--manage-crd=false", "--log-format", "json")

	marked := waitForCR(t, objects, name, "the status-error annotation", func(cr crd.ClusterReadiness) bool {
		return strings.Contains(cr.Annotations[crd.StatusErrorAnnotation], "forbidden")
	})
	if marked.Status.LastEvaluated != nil {
		t.Errorf("status written although the role forbids it: %+v", marked.Status)
	}

	grant(t, cs, ns+"-status", []rbacv1.PolicyRule{
		{APIGroups: []string{crd.Group}, Resources: []string{"clusterreadinesses/status"}, Verbs: []string{"get", "update", "patch"}},
	}, ns)
	cleared := waitForCR(t, objects, name, "a status and no marker", func(cr crd.ClusterReadiness) bool {
		_, marked := cr.Annotations[crd.StatusErrorAnnotation]
		return cr.Status.LastEvaluated != nil && !marked
	})
	if len(cleared.Status.Targets) != 1 {
		t.Errorf("targets = %+v after the grant", cleared.Status.Targets)
	}
	if !logged(logs, `"msg":"tick failed"`) || !logged(logs, `"msg":"tick complete"`) {
		t.Errorf("want a failed tick, then a complete one; log:\n%s", logs.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["msg"] == nil {
			t.Errorf("log line is not a JSON record: %q", line)
		}
	}
}

// serviceAccountKubeconfig creates a service account bound to rules and writes a kubeconfig
// (context "admin", as startAgent passes) that authenticates with a token for it.
func serviceAccountKubeconfig(t *testing.T, cs kubernetes.Interface, adminKubeconfig, ns string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, ns+"-status", metav1.DeleteOptions{})
	grant(t, cs, ns, rules, ns)
	expiry := int64(3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "agent",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := base.Clusters[base.Contexts["admin"].Cluster]
	out := clientcmdapi.NewConfig()
	out.Clusters["server"] = cluster
	out.AuthInfos["agent"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	out.Contexts["admin"] = &clientcmdapi.Context{Cluster: "server", AuthInfo: "agent"}
	out.CurrentContext = "admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// grant binds a cluster role holding rules to the service account ns/agent.
func grant(t *testing.T, cs kubernetes.Interface, name string, rules []rbacv1.PolicyRule, ns string) {
	t.Helper()
	ctx := context.Background()
	_ = cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "agent", Namespace: ns}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
