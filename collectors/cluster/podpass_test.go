package cluster

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// With a pass every three collections, pods created after a pass are seen at the next one,
// not before; a chart change forces the pass at the next collection.
func TestAPodPassEveryThreeCollectionsAndAChartChangeForcesOne(t *testing.T) {
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	cs := kubernetes.NewForConfigOrDie(cfg)
	col, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	pod := func(name string) string {
		image := "example.com/podpass/" + name + ":" + sfx
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "podpass-" + name + "-" + sfx, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			zero := int64(0)
			_ = cs.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
		return image
	}
	collect := func() (*inventory.Document, inventory.Capability) {
		doc := &inventory.Document{Capabilities: map[string]inventory.Capability{}}
		return doc, col.addonsPass(ctx, doc, 3, inventory.ImageWatch{}, col.newPreflightPass())
	}
	has := func(doc *inventory.Document, image string) bool {
		for _, w := range doc.WorkloadImages {
			for _, v := range w.Versions {
				if w.Reference(v) == image {
					return true
				}
			}
		}
		return false
	}

	a := pod("a")
	doc, first := collect()
	if !has(doc, a) {
		t.Fatal("the first collection is a pod pass and sees pod a")
	}
	col.pods.noteCharts(&inventory.Document{})
	b := pod("b")
	for i := 2; i <= 3; i++ {
		doc, capability := collect()
		if has(doc, b) || !has(doc, a) || !strings.Contains(capability.Reason, "last pod pass") {
			t.Errorf("collection %d: b seen %v, a seen %v, reason %q; want the first pass's images reused", i, has(doc, b), has(doc, a), capability.Reason)
		}
		if !reflect.DeepEqual(capability, first) {
			// Otherwise an unchanged cluster's inventory would change between collections.
			t.Errorf("collection %d says %+v, the pass before it %+v: want the same capability", i, capability, first)
		}
	}
	if doc, _ := collect(); !has(doc, b) {
		t.Error("the fourth collection is a pod pass and sees pod b")
	}
	c := pod("c")
	col.pods.noteCharts(&inventory.Document{HelmReleases: []inventory.HelmRelease{{Namespace: "web", Name: "shop", Chart: "shop", ChartVersion: "1.2.0"}}})
	if doc, _ := collect(); !has(doc, c) {
		t.Error("a chart change did not force a pod pass")
	}
}
