package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	helm3chart "helm.sh/helm/v3/pkg/chart"
	helm3release "helm.sh/helm/v3/pkg/release"
	helm3driver "helm.sh/helm/v3/pkg/storage/driver"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

const pdbManifest = `---
# Source: shop/templates/pdb.yaml
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: shop
spec:
  minAvailable: 1
---
# Source: shop/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop
`

// pdbObserve records the PodDisruptionBudgets of policy/v1beta1 from Helm manifests.
var pdbObserve = kb.Observe{
	Watched:       map[string]bool{"policy/v1beta1/PodDisruptionBudget": true},
	Known:         map[string]bool{"policy/v1beta1/PodDisruptionBudget": true, "v1/ConfigMap": true},
	BuiltinGroups: map[string]bool{"": true, "policy": true},
}

func release(name, ns string, revision int, status common.Status, kubeVersion, manifest string) *releasev1.Release {
	return &releasev1.Release{
		Name: name, Namespace: ns, Version: revision,
		Info:     &releasev1.Info{Status: status},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: "1.2.0", AppVersion: "2.0.1", KubeVersion: kubeVersion}},
		Manifest: manifest,
	}
}

// store writes a release record with the Helm SDK's own storage driver, as `helm install`
// and `helm upgrade` do.
func store(t *testing.T, d driver.Driver, rel *releasev1.Release) {
	t.Helper()
	if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rel.Version), rel); err != nil {
		t.Fatal(err)
	}
}

func helmNamespace(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	name := fmt.Sprintf("helm-%d", time.Now().UnixNano()%1e6)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The test server runs no namespace controller: delete the records themselves.
		ctx, helm := context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"}
		_ = c.CoreV1().Secrets(name).DeleteCollection(ctx, metav1.DeleteOptions{}, helm)
		_ = c.CoreV1().ConfigMaps(name).DeleteCollection(ctx, metav1.DeleteOptions{}, helm)
		_ = c.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}

func TestHelmReadsTheInstalledRevisionFromBothDrivers(t *testing.T) {
	c := adminClient(t, envServer)
	drivers := map[string]func(ns string) driver.Driver{
		"secrets":    func(ns string) driver.Driver { return driver.NewSecrets(c.CoreV1().Secrets(ns)) },
		"configmaps": func(ns string) driver.Driver { return driver.NewConfigMaps(c.CoreV1().ConfigMaps(ns)) },
	}
	for name, newDriver := range drivers {
		t.Run(name, func(t *testing.T) {
			ns := helmNamespace(t, c)
			d := newDriver(ns)
			store(t, d, release("shop", ns, 1, common.StatusDeployed, ">=1.21.0-0 <1.34.0-0", pdbManifest))
			store(t, d, release("upgraded", ns, 1, common.StatusSuperseded, "", ""))
			store(t, d, release("upgraded", ns, 2, common.StatusDeployed, "", ""))
			store(t, d, release("broken", ns, 1, common.StatusDeployed, "", ""))
			store(t, d, release("broken", ns, 2, common.StatusFailed, "", ""))
			store(t, d, release("gone", ns, 1, common.StatusUninstalled, "", ""))

			var doc inventory.Document
			opts := files.Options{Observe: pdbObserve}
			capability := collector(t, envServer, "admin").Helm(context.Background(), &doc, opts)
			if !capability.Available || capability.Partial {
				t.Fatalf("helm = %+v", capability)
			}
			got := map[string]inventory.HelmRelease{}
			for _, r := range doc.HelmReleases {
				if r.Namespace == ns {
					got[r.Name] = r
				}
			}
			if len(got) != 3 || got["gone"].Name != "" {
				t.Fatalf("releases = %+v, want shop, upgraded and broken (gone was uninstalled)", got)
			}
			if got["upgraded"].Revision != 2 || got["broken"].Revision != 1 {
				t.Errorf("revisions: upgraded %d broken %d; want 2 and 1 (the failed 2 is not installed)", got["upgraded"].Revision, got["broken"].Revision)
			}
			shop := got["shop"]
			if shop.Chart != "shop" || shop.ChartVersion != "1.2.0" || shop.AppVersion != "2.0.1" || shop.KubeVersion != ">=1.21.0-0 <1.34.0-0" || shop.Status != "deployed" {
				t.Errorf("shop = %+v", shop)
			}
			if len(shop.ManifestAPIs) != 1 || shop.ManifestAPIs[0].Kind != "PodDisruptionBudget" || shop.ManifestAPIs[0].Objects[0].Line != 3 ||
				shop.ManifestAPIs[0].Objects[0].RenderedFrom != "shop/templates/pdb.yaml" {
				t.Errorf("stored manifest APIs = %+v", shop.ManifestAPIs)
			}
		})
	}
}

func TestHelmSkipsAndNamesAReleaseTooLargeToDecode(t *testing.T) {
	c := adminClient(t, envServer)
	ns := helmNamespace(t, c)
	secrets := driver.NewSecrets(c.CoreV1().Secrets(ns))
	// 40 MiB of one repeated line compresses to a few hundred KiB: a small record, a bomb.
	store(t, secrets, release("bomb", ns, 1, common.StatusDeployed, "", strings.Repeat("# padding line\n", 40<<20/15)))
	store(t, secrets, release("fine", ns, 1, common.StatusDeployed, "", ""))
	var doc inventory.Document
	capability := collector(t, envServer, "admin").Helm(context.Background(), &doc, files.Options{})
	if !capability.Partial || !strings.Contains(strings.Join(capability.Skipped, " "), ns+"/bomb: ") {
		t.Errorf("helm = %+v, want partial naming %s/bomb", capability, ns)
	}
	found := false
	for _, r := range doc.HelmReleases {
		found = found || r.Namespace == ns && r.Name == "fine"
	}
	if !found {
		t.Error("the release within bounds was not read")
	}
}

func TestHelmForAViewerIsNotAvailable(t *testing.T) {
	var doc inventory.Document
	capability := collector(t, envServer, "viewer").Helm(context.Background(), &doc, files.Options{})
	if capability.Available || !strings.Contains(capability.Reason, "forbidden") {
		t.Errorf("helm = %+v, want unavailable and forbidden", capability)
	}
}

func TestASecondCollectionFetchesOnlyChangedReleases(t *testing.T) {
	c := adminClient(t, envServer)
	ns := helmNamespace(t, c)
	secrets := driver.NewSecrets(c.CoreV1().Secrets(ns))
	for i := range 5 {
		store(t, secrets, release(fmt.Sprintf("app%d", i), ns, 1, common.StatusDeployed, "", ""))
	}
	cfg := restConfig(t, envServer, "admin")
	gets := map[string]bool{}
	cfg.WrapTransport = recordGets(gets, "/namespaces/"+ns+"/secrets/sh.helm.release")
	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var first, second inventory.Document
	col.Helm(context.Background(), &first, files.Options{})
	firstGets := len(gets)
	clear(gets)
	store(t, secrets, release("app0", ns, 2, common.StatusDeployed, "", "")) // an upgrade
	col.Helm(context.Background(), &second, files.Options{})
	if firstGets < 5 || len(gets) != 1 {
		t.Errorf("fetched %d records first and %v on the second collection; want every one, then only the upgraded release", firstGets, gets)
	}
	for _, r := range second.HelmReleases {
		if r.Namespace == ns && r.Name == "app0" && r.Revision != 2 {
			t.Errorf("app0 revision %d after the upgrade", r.Revision)
		}
	}
}

// TestHelmReadsRecordsHelm3Wrote writes releases with the Helm 3 SDK's drivers, as a Helm 3
// client does, and reads them with ours (the Helm 4 SDK).
func TestHelmReadsRecordsHelm3Wrote(t *testing.T) {
	c := adminClient(t, envServer)
	ns := helmNamespace(t, c)
	for i, d := range []helm3driver.Driver{helm3driver.NewSecrets(c.CoreV1().Secrets(ns)), helm3driver.NewConfigMaps(c.CoreV1().ConfigMaps(ns))} {
		rel := &helm3release.Release{
			Name: fmt.Sprintf("helm3-%d", i), Namespace: ns, Version: 4,
			Info:     &helm3release.Info{Status: helm3release.StatusDeployed},
			Chart:    &helm3chart.Chart{Metadata: &helm3chart.Metadata{APIVersion: "v2", Name: "legacy", Version: "0.9.0", AppVersion: "1.0", KubeVersion: "<1.30.0-0"}},
			Manifest: pdbManifest,
		}
		if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v4", rel.Name), rel); err != nil {
			t.Fatal(err)
		}
	}
	var doc inventory.Document
	opts := files.Options{Observe: pdbObserve}
	if capability := collector(t, envServer, "admin").Helm(context.Background(), &doc, opts); !capability.Available || capability.Partial {
		t.Fatalf("helm = %+v", capability)
	}
	n := 0
	for _, r := range doc.HelmReleases {
		if r.Namespace != ns {
			continue
		}
		n++
		if r.Chart != "legacy" || r.Revision != 4 || r.KubeVersion != "<1.30.0-0" || r.Status != "deployed" || len(r.ManifestAPIs) != 1 {
			t.Errorf("release %+v", r)
		}
	}
	if n != 2 {
		t.Errorf("read %d Helm 3 records, want one per driver", n)
	}
}

// A Helm manifest document past its bounds might hold a removed API the next helm upgrade
// writes: helm is an optional capability, so the unread document is also named in
// api-usage, and the verdict cannot be ready without it.
func TestAnUnreadHelmManifestDocumentMakesAPIUsagePartial(t *testing.T) {
	c := adminClient(t, envServer)
	ns := helmNamespace(t, c)
	manifest := pdbManifest + "---\nitems: [" + strings.Repeat("1,", files.MaxDocumentNodes) + "1]\n"
	store(t, driver.NewSecrets(c.CoreV1().Secrets(ns)), release("shop", ns, 1, common.StatusDeployed, "", manifest))
	opts := cluster.Options{StepTimeout: 30 * time.Second, Observe: kb.Observe{
		Watched:       map[string]bool{"policy/v1beta1/PodDisruptionBudget": true},
		BuiltinGroups: map[string]bool{"": true, "policy": true},
	}}
	doc := collector(t, envServer, "admin").Collect(context.Background(), time.Now(), opts)
	usage := doc.Capabilities[inventory.CapAPIUsage]
	want := ns + "/shop: manifest:16: document of more than"
	if !usage.Available || !usage.Partial || !strings.Contains(strings.Join(usage.Skipped, "\n"), want) ||
		!strings.Contains(usage.Reason, "Helm manifest document(s) past their bounds not judged") {
		t.Errorf("api-usage = %+v, want partial naming %q", usage, want)
	}
}
