package main

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// populatePreflight adds what the pre-flight steps read, at the shape of a large cluster per
// 1,000 pods: 50 PodDisruptionBudgets (with the status the disruption controller would
// write), a few admission webhooks and CRD conversion webhooks calling services with ready
// endpoints, Ready nodes with their operating system, the control plane's static pods and
// kube-proxy. The API server's own ~50 local APIServices are what api-services lists: an
// aggregated one would be unavailable here (no backend answers the aggregator's check) and
// make every scan's discovery partial. A second run finds it in place.
func populatePreflight(ctx context.Context, cfg *rest.Config) error {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := c.PolicyV1().PodDisruptionBudgets("bench-099").Get(ctx, "pdb", metav1.GetOptions{}); err == nil {
		return nil
	}
	steps := []func(context.Context, kubernetes.Interface) error{benchNodes, benchBudgets, benchWebhooks, benchControlPlane}
	for _, step := range steps {
		if err := step(ctx, c); err != nil {
			return err
		}
	}
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return benchConversions(ctx, c, ext)
}

// benchNodes makes the 200 nodes Ready, on two operating systems, 4 of them cordoned.
func benchNodes(ctx context.Context, c kubernetes.Interface) error {
	for i := range 200 {
		n, err := c.CoreV1().Nodes().Get(ctx, fmt.Sprintf("bench-node-%03d", i), metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.NodeInfo.OSImage = []string{"Ubuntu 24.04.1 LTS", "Bottlerocket OS 1.26.1"}[i%2]
		n.Status.NodeInfo.KernelVersion, n.Status.NodeInfo.ContainerRuntimeVersion = "6.8.0-1017-aws", "containerd://1.7.27"
		if n, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return err
		}
		if i%50 == 0 {
			n.Spec.Unschedulable = true
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// benchBudgets: one PodDisruptionBudget in each of 100 namespaces, selecting its 10 pods,
// every fifth allowing no disruption.
func benchBudgets(ctx context.Context, c kubernetes.Interface) error {
	one := intstr.FromInt32(1)
	for i := range 100 {
		ns := fmt.Sprintf("bench-%03d", i)
		pdb, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		allowed := 1
		if i%5 == 0 {
			allowed = 0
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: int32(allowed), CurrentHealthy: 10, DesiredHealthy: 9, ExpectedPods: 10}
		if _, err := c.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// benchService is a service on 443 in bench-webhooks with an EndpointSlice of two ready
// endpoints.
func benchService(ctx context.Context, c kubernetes.Interface, name string) error {
	ns := "bench-webhooks"
	if _, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(9443)}}}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	https, port, ready := "https", int32(9443), true
	_, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.2.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{"10.2.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: &https, Port: &port}},
	}, metav1.CreateOptions{})
	return err
}

// benchWebhooks: 4 validating and 4 mutating configurations of two webhooks each, each
// configuration calling its own service, scoped to a namespace label nobody has so that the
// API server never calls them.
func benchWebhooks(ctx context.Context, c kubernetes.Interface) error {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-webhooks"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
	scope := &metav1.LabelSelector{MatchLabels: map[string]string{"bench-webhooks": "never"}}
	for i := range 4 {
		name := fmt.Sprintf("bench-hook-%d", i)
		if err := benchService(ctx, c, name); err != nil {
			return err
		}
		ref := admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "bench-webhooks", Name: name}}
		rules := []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule: admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments", "statefulsets"}}}}
		var validating []admissionv1.ValidatingWebhook
		var mutating []admissionv1.MutatingWebhook
		for j := range 2 {
			hook := fmt.Sprintf("%s-%d.bench.example.com", name, j)
			validating = append(validating, admissionv1.ValidatingWebhook{Name: hook, ClientConfig: ref, Rules: rules, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: scope})
			mutating = append(mutating, admissionv1.MutatingWebhook{Name: hook, ClientConfig: ref, Rules: rules, FailurePolicy: &fail,
				SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: scope})
		}
		if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
			&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: validating}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
			&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: mutating}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// benchConversions: two CRDs converting between two versions through a webhook.
func benchConversions(ctx context.Context, c kubernetes.Interface, ext apiextensions.Interface) error {
	schema := &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}
	for i := range 2 {
		name := fmt.Sprintf("bench-convert-%d", i)
		if err := benchService(ctx, c, name); err != nil {
			return err
		}
		group := fmt.Sprintf("convert%d.bench.example.com", i)
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: group, Scope: apiextv1.NamespaceScoped,
				Names: apiextv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets", Singular: "widget", ListKind: "WidgetList"},
				Versions: []apiextv1.CustomResourceDefinitionVersion{
					{Name: "v1", Served: true, Storage: true, Schema: schema}, {Name: "v1beta1", Served: true, Schema: schema},
				},
				Conversion: &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig:             &apiextv1.WebhookClientConfig{Service: &apiextv1.ServiceReference{Namespace: "bench-webhooks", Name: name}},
				}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
	}
	return nil
}

// benchControlPlane: three control-plane static pods (mirror pods) on three control-plane
// nodes each, as kubeadm runs them, and kube-proxy's DaemonSet and ConfigMap.
func benchControlPlane(ctx context.Context, c kubernetes.Interface) error {
	for _, comp := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		for n := range 3 {
			node := fmt.Sprintf("bench-node-%03d", n)
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: comp + "-" + node, Namespace: "kube-system",
					Labels:      map[string]string{"component": comp, "tier": "control-plane"},
					Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "bench", "kubernetes.io/config.source": "file"}},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: comp, Image: "registry.k8s.io/" + comp + ":v1.35.4",
					Command: []string{comp, "--feature-gates=ExampleGate=true", "--v=2", "--profiling=false"}}}},
			}
			if _, err := c.CoreV1().Pods("kube-system").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
	}
	if _, err := c.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"},
		Data: map[string]string{"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n"}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"k8s-app": "kube-proxy"}
	_, err := c.AppsV1().DaemonSets("kube-system").Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.35.4",
				Command: []string{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf"}}}},
		}}}, metav1.CreateOptions{})
	return err
}

func ptr[T any](v T) *T { return &v }
