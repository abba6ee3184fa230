package files

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestPodTemplatesRecordImagesWithRecommendedLabels(t *testing.T) {
	res := collect(t, map[string]string{
		"ingress.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress-nginx-controller
  namespace: ingress
  labels: {app.kubernetes.io/name: ingress-nginx, app.kubernetes.io/part-of: ingress-nginx}
spec:
  template:
    metadata:
      labels: {app.kubernetes.io/version: "1.9.4"}
    spec:
      initContainers: [{name: init, image: "busybox:1.36"}]
      containers: [{name: controller, image: "registry.k8s.io/ingress-nginx/controller:v1.9.4@sha256:abc"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup, namespace: ops}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: velero, image: velero/velero:v1.12.0}]
---
apiVersion: v1
kind: Pod
metadata: {name: debug, namespace: ingress}
spec:
  containers: [{name: c, image: "busybox:1.36"}]
`,
		"again.json": `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"x","namespace":"ops"},"spec":{"template":{"spec":{"containers":[{"image":"busybox:1.36"}]}}}}`,
	})
	nginxLabels := map[string]string{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/part-of": "ingress-nginx", "app.kubernetes.io/version": "1.9.4"}
	nginx := inventory.ObjectRef{Namespace: "ingress", Name: "ingress-nginx-controller", File: "ingress.yaml", Line: 1}
	want := []inventory.WorkloadImage{
		{Repository: "busybox", Versions: []inventory.ImageVersion{{
			Tag: "1.36", Namespaces: []string{"ingress", "ops"}, LabelSets: []map[string]string{nginxLabels},
			Objects: []inventory.ObjectRef{{Namespace: "ops", Name: "x", File: "again.json", Line: 1}, nginx, {Namespace: "ingress", Name: "debug", File: "ingress.yaml", Line: 25}},
		}}},
		{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []inventory.ImageVersion{{
			Tag: "v1.9.4", Digest: "sha256:abc", Namespaces: []string{"ingress"}, LabelSets: []map[string]string{nginxLabels}, Objects: []inventory.ObjectRef{nginx},
		}}},
		{Repository: "velero/velero", Versions: []inventory.ImageVersion{{
			Tag: "v1.12.0", Namespaces: []string{"ops"}, Objects: []inventory.ObjectRef{{Namespace: "ops", Name: "backup", File: "ingress.yaml", Line: 15}},
		}}},
	}
	if !reflect.DeepEqual(res.WorkloadImages, want) {
		t.Errorf("images:\n got %+v\nwant %+v", res.WorkloadImages, want)
	}
}

func TestImagesNoMatcherCanClaimKeepOnlyTheirVersionsAndNamespaces(t *testing.T) {
	opts := testOptions()
	opts.Images = inventory.ImageWatch{Segments: map[string]bool{"ingress-nginx": true}, Names: map[string]bool{"traefik": true}}
	res := collectWith(t, opts, map[string]string{"d.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: web, labels: {app.kubernetes.io/name: shop}}
spec: {template: {spec: {containers: [{image: "registry.example.com/shop:2.1"}, {image: "mirror.example/ingress-nginx/controller:v1.9.4"}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: edge, namespace: web, labels: {app.kubernetes.io/name: traefik}}
spec: {template: {spec: {containers: [{image: "registry.example.com/edge:3"}]}}}
`})
	ref := func(name string, line int) []inventory.ObjectRef {
		return []inventory.ObjectRef{{Namespace: "web", Name: name, File: "d.yaml", Line: line}}
	}
	want := []inventory.WorkloadImage{
		{Repository: "mirror.example/ingress-nginx/controller", Versions: []inventory.ImageVersion{{
			Tag: "v1.9.4", Namespaces: []string{"web"}, LabelSets: []map[string]string{{"app.kubernetes.io/name": "shop"}}, Objects: ref("shop", 1),
		}}},
		{Repository: "registry.example.com/edge", Versions: []inventory.ImageVersion{{
			Tag: "3", Namespaces: []string{"web"}, LabelSets: []map[string]string{{"app.kubernetes.io/name": "traefik"}}, Objects: ref("edge", 6),
		}}},
		{Repository: "registry.example.com/shop", Versions: []inventory.ImageVersion{{Tag: "2.1", Namespaces: []string{"web"}}}},
	}
	if !reflect.DeepEqual(res.WorkloadImages, want) {
		t.Errorf("images:\n got %+v\nwant %+v", res.WorkloadImages, want)
	}
}

func TestLabelSetsAndWorkloadsPerImageVersionAreCapped(t *testing.T) {
	var b strings.Builder
	for i := range inventory.MaxLabelSets + 3 {
		b.WriteString("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: x, labels: {app.kubernetes.io/name: app-" + strconv.Itoa(i) + "}}\nspec: {template: {spec: {containers: [{image: shared:1}]}}}\n")
	}
	res := collect(t, map[string]string{"d.yaml": b.String()})
	if len(res.WorkloadImages) != 1 || len(res.WorkloadImages[0].Versions) != 1 {
		t.Fatalf("images = %+v", res.WorkloadImages)
	}
	v := res.WorkloadImages[0].Versions[0]
	if len(v.LabelSets) != inventory.MaxLabelSets || v.LabelSetsOmitted != 3 {
		t.Errorf("label sets %d, omitted %d; want %d and 3", len(v.LabelSets), v.LabelSetsOmitted, inventory.MaxLabelSets)
	}
	if len(v.Objects) != inventory.MaxImageObjectRefs || v.ObjectsOmitted != inventory.MaxLabelSets+3-inventory.MaxImageObjectRefs {
		t.Errorf("objects %d, omitted %d", len(v.Objects), v.ObjectsOmitted)
	}
}

func TestIngressClassesNamespacesAndTeamsAreRecorded(t *testing.T) {
	res := collect(t, map[string]string{"x.yaml": `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: payments}}
---
apiVersion: v1
kind: Namespace
metadata: {name: sandbox}
`})
	if !reflect.DeepEqual(res.IngressClasses, []inventory.IngressClass{{Name: "nginx", Controller: "k8s.io/ingress-nginx"}}) {
		t.Errorf("ingress classes = %+v", res.IngressClasses)
	}
	if !reflect.DeepEqual(res.Namespaces, []inventory.Namespace{{Name: "shop", Team: "payments"}, {Name: "sandbox"}}) {
		t.Errorf("namespaces = %+v", res.Namespaces)
	}
}

func TestCRDsCarryTheirCustomResourcesAndOrphansMakeCRDsPartial(t *testing.T) {
	res := collect(t, map[string]string{
		"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec:
  group: cert-manager.io
  names: {kind: Certificate, plural: certificates}
  versions:
  - {name: v1alpha2, served: false, storage: false}
  - {name: v1beta1, served: true, storage: false, deprecated: true, deprecationWarning: "v1beta1 is deprecated; use v1"}
  - {name: v1, served: true, storage: true}
status:
  storedVersions: [v1alpha2, v1]
`,
		"certs.yaml": "apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: web, namespace: shop}\n---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: api, namespace: shop}\n---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: sm}\n",
	})
	if len(res.CRDs) != 1 {
		t.Fatalf("crds = %+v", res.CRDs)
	}
	c := res.CRDs[0]
	if c.Group != "cert-manager.io" || c.Kind != "Certificate" || len(c.Versions) != 3 || !c.Versions[1].Deprecated ||
		c.Versions[1].DeprecationWarning != "v1beta1 is deprecated; use v1" || c.Versions[0].Served || !reflect.DeepEqual(c.StoredVersions, []string{"v1alpha2", "v1"}) {
		t.Errorf("crd = %+v", c)
	}
	var usage []string
	for _, u := range c.Usage {
		usage = append(usage, u.Version+" "+u.Objects[0].Name+" "+u.Objects[0].File)
	}
	if !reflect.DeepEqual(usage, []string{"v1 api certs.yaml", "v1alpha2 web certs.yaml"}) {
		t.Errorf("usage = %q", usage)
	}
	if len(res.Orphans) != 1 || res.Orphans[0].Group != "monitoring.coreos.com" || res.Orphans[0].Kind != "ServiceMonitor" ||
		res.Orphans[0].Count != 1 {
		t.Errorf("orphans = %+v, want the ServiceMonitor's usage", res.Orphans)
	}
	if c := crdCapability(res.Orphans); !c.Partial || !reflect.DeepEqual(c.Skipped, []string{"monitoring.coreos.com/v1 ServiceMonitor"}) {
		t.Errorf("crds capability = %+v, want partial naming the ServiceMonitor", c)
	}
}

func TestUnknownVersionsOfBuiltinGroupsAreListed(t *testing.T) {
	res := collect(t, map[string]string{"x.yaml": "apiVersion: apps/v1beta9\nkind: Deployment\nmetadata: {name: future}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fine}\n"})
	if got := refs(res); !reflect.DeepEqual(got, []string{"apps/v1beta9 Deployment /future x.yaml:1"}) {
		t.Errorf("objects = %q", got)
	}
}

func TestIgnoreAnnotationsTravelWithTheObjectAndNeedAReason(t *testing.T) {
	res := collect(t, map[string]string{"x.yaml": `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: kept
  annotations:
    upgradescope.basit.engineer/ignore: removed-api
    upgradescope.basit.engineer/ignore-reason: migrating with the mesh in Q1
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: unexplained
  annotations: {upgradescope.basit.engineer/ignore: removed-api}
`})
	objs := res.APIUsage[0].Objects
	if objs[0].Ignore == nil || objs[0].Ignore.Reason != "migrating with the mesh in Q1" || objs[1].Ignore != nil {
		t.Errorf("objects = %+v %+v", objs[0], objs[1])
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "x.yaml:9: upgradescope.basit.engineer/ignore without") || res.Warnings[0].Partial {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestACRDRenderedForSeveralEnvironmentsIsRecordedOnce(t *testing.T) {
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  versions:\n  - {name: v1, served: true, storage: true}\n"
	changed := strings.Replace(crd, "storage: true}", "storage: true}\n  - {name: v2, served: true, storage: false}", 1)
	res := collect(t, map[string]string{"dev/crd.yaml": crd, "prod/crd.yaml": crd, "next/crd.yaml": changed})
	if len(res.CRDs) != 2 || len(res.CRDs[0].Versions) != 1 || len(res.CRDs[1].Versions) != 2 {
		t.Errorf("crds = %+v, want the two distinct definitions once each", res.CRDs)
	}
}
