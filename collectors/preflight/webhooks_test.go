package preflight

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestEveryWebhookOfAConfigurationIsRecordedWithoutItsURLOrCABundle(t *testing.T) {
	doc := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
- name: pods.policy.example.com
  failurePolicy: Fail
  timeoutSeconds: 5
  rules:
  - {operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods], scope: Namespaced}
  clientConfig:
    service: {namespace: policy-system, name: webhook}
    caBundle: Q0EgQlVORExFIFNFQ1JFVA==
  objectSelector: {}
- name: external.example.com
  clientConfig:
    url: https://admin:hunter2@hooks.example.com/validate
  objectSelector: {matchLabels: {checked: "yes"}}
`
	p := observeAll(t, []string{doc}, FromManifests())
	config := inventory.ObjectRef{Kind: "ValidatingWebhookConfiguration", Name: "policy", File: "m.yaml", Line: 1}
	want := []inventory.Webhook{
		{
			Configuration: config, APIVersion: "admissionregistration.k8s.io/v1", Name: "pods.policy.example.com",
			FailurePolicy: "Fail", TimeoutSeconds: 5, CoversKubeSystem: true, ObjectSelectorEmpty: true,
			Rules:   []inventory.WebhookRule{{Operations: []string{"CREATE", "UPDATE"}, APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: "Namespaced"}},
			Service: &inventory.ServiceRef{Namespace: "policy-system", Name: "webhook", Port: 443},
		},
		{
			Configuration: config, APIVersion: "admissionregistration.k8s.io/v1", Name: "external.example.com",
			CoversKubeSystem: true,
		},
	}
	if !reflect.DeepEqual(p.Webhooks, want) {
		got, _ := json.MarshalIndent(p.Webhooks, "", " ")
		t.Errorf("webhooks\n%s", got)
	}
	data, _ := json.Marshal(p)
	for _, secret := range []string{"hunter2", "hooks.example.com", "Q0EgQlVORExFIFNFQ1JFVA"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the section holds %q: %s", secret, data)
		}
	}
}

func TestAWebhooksNamespaceSelectorIsJudgedAgainstKubeSystemsLabels(t *testing.T) {
	for _, tc := range []struct {
		name, selector string
		labels         map[string]string
		want           bool
	}{
		{"no selector matches every namespace", "", nil, true},
		{"an empty selector matches every namespace", "namespaceSelector: {}", nil, true},
		{"excluding kube-system by name leaves it out", "namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]}", nil, false},
		{"a label manifests cannot show on kube-system leaves it out in files mode", "namespaceSelector: {matchLabels: {policy: enforced}}", nil, false},
		{"a label kube-system carries live includes it", "namespaceSelector: {matchLabels: {policy: enforced}}", map[string]string{"kubernetes.io/metadata.name": "kube-system", "policy": "enforced"}, true},
		{"a common opt-out label kube-system carries live leaves it out", "namespaceSelector: {matchExpressions: [{key: control-plane, operator: DoesNotExist}]}", map[string]string{"control-plane": "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingWebhookConfiguration\nmetadata: {name: m}\nwebhooks:\n- name: w\n  " + tc.selector + "\n  clientConfig: {service: {namespace: a, name: b, port: 8443}}\n"
			r := NewRecorder()
			obj := decode(t, doc)
			r.Observe(obj, refOf(obj, ""), nil)
			r.KubeSystemLabels = tc.labels // set after observing: judged in Section
			w := r.Section().Webhooks
			if len(w) != 1 || w[0].CoversKubeSystem != tc.want || w[0].Service.Port != 8443 || w[0].APIVersion != "admissionregistration.k8s.io/v1beta1" {
				t.Errorf("webhooks %+v, want one covering kube-system: %v", w, tc.want)
			}
		})
	}
}

func TestAWebhookListsItsBoundOfRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhooks:\n- name: w\n  rules:\n")
	for range inventory.MaxWebhookRules + 2 {
		b.WriteString("  - {operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*']}\n")
	}
	w := observeAll(t, []string{b.String()}).Webhooks[0]
	if len(w.Rules) != inventory.MaxWebhookRules || w.RulesOmitted != 2 {
		t.Errorf("%d rules, %d omitted; want %d and 2", len(w.Rules), w.RulesOmitted, inventory.MaxWebhookRules)
	}
}

func TestAggregatedAPIServicesAreRecordedAndLocalOnesLeftOut(t *testing.T) {
	p := observeAll(t, []string{
		"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec: {group: metrics.k8s.io, version: v1beta1, service: {namespace: kube-system, name: metrics-server}}\n" +
			"status: {conditions: [{type: Available, status: \"False\", reason: MissingEndpoints, message: endpoints for service/metrics-server in \"kube-system\" have no addresses}]}\n",
		"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.apps}\nspec: {group: apps, version: v1, groupPriorityMinimum: 17800, versionPriority: 15}\n",
	})
	want := []inventory.APIService{{
		Object: inventory.ObjectRef{Kind: "APIService", Name: "v1beta1.metrics.k8s.io", File: "m.yaml", Line: 1},
		Group:  "metrics.k8s.io", Version: "v1beta1",
		Service:   &inventory.ServiceRef{Namespace: "kube-system", Name: "metrics-server", Port: 443},
		Available: "False", Reason: "MissingEndpoints", Message: `endpoints for service/metrics-server in "kube-system" have no addresses`,
	}}
	if !reflect.DeepEqual(p.APIServices, want) {
		t.Errorf("APIServices %+v, want %+v", p.APIServices, want)
	}
}

func TestCRDsConvertingThroughAWebhookAreConversions(t *testing.T) {
	p := observeAll(t, []string{
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget}\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig: {service: {namespace: widgets, name: converter, port: 9443, path: /convert}}\n",
		"apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Gadget}\n  conversion:\n    strategy: Webhook\n    webhookClientConfig: {url: 'https://user:pw@convert.example.com'}\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: plain.example.com}\nspec:\n  group: example.com\n  names: {kind: Plain}\n  conversion: {strategy: None}\n",
	})
	want := []inventory.Conversion{
		{CRD: inventory.ObjectRef{Kind: "CustomResourceDefinition", Name: "gadgets.example.com", File: "m.yaml", Line: 1}, Group: "example.com", Kind: "Gadget", URL: true},
		{
			CRD: inventory.ObjectRef{Kind: "CustomResourceDefinition", Name: "widgets.example.com", File: "m.yaml", Line: 1}, Group: "example.com", Kind: "Widget",
			Service: &inventory.ServiceRef{Namespace: "widgets", Name: "converter", Port: 9443},
		},
	}
	if !reflect.DeepEqual(p.Conversions, want) {
		t.Errorf("conversions %+v, want %+v", p.Conversions, want)
	}
	if data, _ := json.Marshal(p); strings.Contains(string(data), "convert.example.com") {
		t.Errorf("the section holds the conversion URL: %s", data)
	}
}
