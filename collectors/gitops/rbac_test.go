package gitops_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

// requestLog records "VERB path" of every request the Reader makes.
type requestLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.lines = append(l.lines, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// readerAs builds a Reader acting as a ServiceAccount (by impersonation from the admin
// context), logging its requests.
func readerAs(t *testing.T, namespace, sa string) (*gitops.Reader, *requestLog) {
	t.Helper()
	cfg := rest.CopyConfig(restConfig(t, "admin"))
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:authenticated"},
	}
	log := &requestLog{}
	cfg.Wrap(log.wrap)
	kube := kubernetes.NewForConfigOrDie(cfg)
	return gitops.NewReader(dynamic.NewForConfigOrDie(cfg), kube.Discovery(), metadata.NewForConfigOrDie(cfg)), log
}

func grant(t *testing.T, kube kubernetes.Interface, namespace, sa string, rules []rbacv1.PolicyRule, inNamespaces ...string) {
	t.Helper()
	ctx := context.Background()
	_, _ = kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: namespace}}
	name := "gitops-test-" + sa
	if len(inNamespaces) == 0 {
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		check(t, err)
		_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{})
		check(t, err)
		return
	}
	for _, ns := range inNamespaces {
		_ = kube.RbacV1().Roles(ns).Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().RoleBindings(ns).Delete(ctx, name, metav1.DeleteOptions{})
		_, err := kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		check(t, err)
		_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}}, metav1.CreateOptions{})
		check(t, err)
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var listGitOps = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"applications"}, Verbs: []string{"get", "list"}},
	{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: []string{"get", "list"}},
}

func ociRules(verbs ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"ocirepositories"}, Verbs: verbs}}
}

// Two namespaces hold OCIRepositories: the role may list one and only get in the other.
func TestOCIRepositoriesAreReadPerNamespaceThenByNameAndRefusalsAreRemembered(t *testing.T) {
	dyn, _ := setUpScenario(t)
	cfg := restConfig(t, "admin")
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gitops-flux-b"}}, metav1.CreateOptions{})
	createObject(t, dyn, `{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: other, namespace: gitops-flux-b}, spec: {interval: 10m, url: "oci://ghcr.io/acme/charts/other", ref: {tag: 1.0.0}}}`)
	createObject(t, dyn, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: cross-ns, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: other, namespace: gitops-flux-b}}}`)
	t.Cleanup(func() {
		_ = dyn.Resource(helmReleases).Namespace("gitops-flux").Delete(ctx, "cross-ns", metav1.DeleteOptions{})
	})
	grant(t, kube, "default", "gitops-limited", listGitOps)
	grant(t, kube, "default", "gitops-limited", ociRules("get", "list"), "gitops-flux")
	grant(t, kube, "default", "gitops-limited-get", ociRules("get"), "gitops-flux-b")
	_, _ = kube.RbacV1().RoleBindings("gitops-flux-b").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gitops-test-limited-b"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "gitops-limited", Namespace: "default"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "gitops-test-gitops-limited-get"},
	}, metav1.CreateOptions{})

	reader, log := readerAs(t, "default", "gitops-limited")
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	reader.Clock = func() time.Time { return now }
	res := reader.Read(ctx)
	if !hasChart(res.Charts, "cross-ns", "other", "1.0.0") || !hasChart(res.Charts, "oci-tag", "podinfo", "6.5.0") {
		t.Fatalf("charts %+v lack the cross-namespace and same-namespace OCIRepository charts; gaps %q", ours(res.Charts), res.Gaps)
	}
	first := ociRequests(log.take())
	wantFirst := []string{
		"GET /apis/source.toolkit.fluxcd.io/v1/ocirepositories",
		"GET /apis/source.toolkit.fluxcd.io/v1/namespaces/gitops-flux/ocirepositories",
		"GET /apis/source.toolkit.fluxcd.io/v1/namespaces/gitops-flux-b/ocirepositories",
		"GET /apis/source.toolkit.fluxcd.io/v1/namespaces/gitops-flux-b/ocirepositories/other",
	}
	if strings.Join(first, "\n") != strings.Join(wantFirst, "\n") {
		t.Errorf("first read asked:\n%s\nwant:\n%s", strings.Join(first, "\n"), strings.Join(wantFirst, "\n"))
	}

	now = now.Add(59 * time.Minute)
	reader.Read(ctx)
	second := ociRequests(log.take())
	wantSecond := []string{
		"GET /apis/source.toolkit.fluxcd.io/v1/namespaces/gitops-flux/ocirepositories",
		"GET /apis/source.toolkit.fluxcd.io/v1/namespaces/gitops-flux-b/ocirepositories/other",
	}
	if strings.Join(second, "\n") != strings.Join(wantSecond, "\n") {
		t.Errorf("a read within the hour asked:\n%s\nwant the refused lists skipped:\n%s", strings.Join(second, "\n"), strings.Join(wantSecond, "\n"))
	}

	now = now.Add(2 * time.Minute)
	reader.Read(ctx)
	if third := ociRequests(log.take()); strings.Join(third, "\n") != strings.Join(wantFirst, "\n") {
		t.Errorf("a read after the hour asked:\n%s\nwant the refused lists asked again:\n%s", strings.Join(third, "\n"), strings.Join(wantFirst, "\n"))
	}
}

func TestAUserWhoCannotListGitOpsObjectsGetsAPartialHelmCapabilityNamingTheForbiddenLists(t *testing.T) {
	setUpScenario(t)
	reader, _ := readerAs(t, "default", "gitops-nobody")
	doc := &inventory.Document{HelmReleases: []inventory.HelmRelease{{Name: "x", Namespace: "y", Chart: "z"}},
		Capabilities: map[string]inventory.Capability{inventory.CapHelm: {Available: true}}}
	gitops.Apply(doc, reader.Read(context.Background()))
	helm := doc.Capabilities[inventory.CapHelm]
	if !helm.Available || !helm.Partial || !strings.Contains(helm.Reason, "forbidden: list applications, helmreleases") {
		t.Errorf("helm = %+v, want partial with the forbidden lists as reason", helm)
	}
}

var helmReleases = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}

// ociRequests are the OCIRepository requests for this test's namespaces (or the whole
// cluster): another test's objects may share the server.
func ociRequests(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasSuffix(l, "/v1/ocirepositories") || strings.Contains(l, "/namespaces/gitops-flux/ocirepositories") ||
			strings.Contains(l, "/namespaces/gitops-flux-b/ocirepositories") {
			out = append(out, l)
		}
	}
	return out
}

func hasChart(charts []inventory.GitopsChart, name, chart, version string) bool {
	for _, c := range charts {
		if c.Name == name && c.Chart == chart && c.Version == version {
			return true
		}
	}
	return false
}

func createObject(t *testing.T, dyn dynamic.Interface, doc string) {
	t.Helper()
	u := decode(t, doc)
	gvr := resourceOf(u)
	ctx := context.Background()
	_ = dyn.Resource(gvr).Namespace(u.GetNamespace()).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
	if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// A role that may read the GitOps objects but no pods, Secrets or ConfigMaps: the charts are
// still add-on evidence, so addons is partial rather than unavailable, and helm says the
// chart sources still feed add-on detection.
func TestChartsFeedAddonDetectionWhenPodsAndHelmStorageAreForbidden(t *testing.T) {
	setUpScenario(t)
	kube := kubernetes.NewForConfigOrDie(restConfig(t, "admin"))
	rules := append([]rbacv1.PolicyRule{}, listGitOps...)
	rules = append(rules, ociRules("get", "list")...)
	grant(t, kube, "default", "gitops-no-pods", rules)

	cfg := rest.CopyConfig(restConfig(t, "admin"))
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:default:gitops-no-pods",
		Groups:   []string{"system:serviceaccounts", "system:authenticated"},
	}
	collector, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	doc := collector.Collect(context.Background(), time.Now(), cluster.Options{StepTimeout: time.Minute})
	addons := doc.Capabilities[inventory.CapAddons]
	if !addons.Available || !addons.Partial || !strings.Contains(addons.Reason, "GitOps chart sources") {
		t.Errorf("addons = %+v, want partial, detected from the GitOps chart sources", addons)
	}
	helm := doc.Capabilities[inventory.CapHelm]
	if helm.Available || !strings.Contains(helm.Reason, "still feed add-on detection") {
		t.Errorf("helm = %+v, want unavailable, saying the chart sources still feed add-on detection", helm)
	}
	if !hasChart(doc.GitopsCharts, "single", "ingress-nginx", "4.11.2") {
		t.Errorf("gitopsCharts %+v lack the Application's ingress-nginx chart", doc.GitopsCharts)
	}
}
