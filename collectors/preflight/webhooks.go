package preflight

import (
	"cmp"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/upgradescope/upgradescope/inventory"
)

// webhookSeen is a webhook and its namespaceSelector, evaluated against kube-system's labels
// in Section (Recorder.KubeSystemLabels may be set after the webhooks were observed).
type webhookSeen struct {
	webhook     inventory.Webhook
	namespaces  labels.Selector
	configOrder int // the webhook's place in its configuration
}

func webhookOrder(a, b webhookSeen) int {
	return cmp.Or(refOrder(a.webhook.Configuration, b.webhook.Configuration), cmp.Compare(a.configOrder, b.configOrder),
		cmp.Compare(a.webhook.Name, b.webhook.Name))
}

// webhookConfiguration records every webhook of a Validating- or MutatingWebhookConfiguration.
// A webhook's clientConfig.url and caBundle are never read: a URL may carry credentials.
func (r *Recorder) webhookConfiguration(obj map[string]any, ref inventory.ObjectRef, apiVersion string) {
	for i, w := range listAt(obj, "webhooks") {
		wh := mapAt(w)
		if wh == nil {
			continue
		}
		hook := inventory.Webhook{
			Configuration:       ref,
			APIVersion:          inventory.BoundString(apiVersion),
			Name:                inventory.BoundString(str(wh, "name")),
			FailurePolicy:       inventory.BoundString(str(wh, "failurePolicy")),
			ObjectSelectorEmpty: wh["objectSelector"] == nil || emptySelector(wh["objectSelector"]),
			Service:             serviceRef(at(wh, "clientConfig", "service")),
			TimeoutSeconds:      count(wh["timeoutSeconds"], 0),
		}
		hook.Rules, hook.RulesOmitted = webhookRules(listAt(wh, "rules"))
		// An absent namespaceSelector defaults to the empty one, which matches every namespace.
		namespaces := labels.Everything()
		if sel := wh["namespaceSelector"]; sel != nil {
			namespaces = selectorOf(sel)
		}
		r.webhooks.add(webhookSeen{webhook: hook, namespaces: namespaces, configOrder: i}, webhookOrder)
	}
}

// webhookRules reads a webhook's rules as written, the first inventory.MaxWebhookRules of
// them, each list cut to as many.
func webhookRules(rules []any) ([]inventory.WebhookRule, int) {
	var out []inventory.WebhookRule
	omitted := 0
	for _, rule := range rules {
		if len(out) == inventory.MaxWebhookRules {
			omitted++
			continue
		}
		out = append(out, inventory.WebhookRule{
			Operations:  ruleList(rule, "operations"),
			APIGroups:   ruleList(rule, "apiGroups"),
			APIVersions: ruleList(rule, "apiVersions"),
			Resources:   ruleList(rule, "resources"),
			Scope:       inventory.BoundString(str(rule, "scope")),
		})
	}
	return out, omitted
}

func ruleList(rule any, key string) []string {
	l := strs(rule, key)
	if len(l) > inventory.MaxWebhookRules {
		l = l[:inventory.MaxWebhookRules]
	}
	for i, s := range l {
		l[i] = inventory.BoundString(s)
	}
	return l
}

// webhookSection answers the webhooks, each judged against kube-system's labels.
func (r *Recorder) webhookSection() ([]inventory.Webhook, int) {
	seen, omitted := r.webhooks.section(webhookOrder)
	if len(seen) == 0 {
		return nil, omitted
	}
	kubeSystem := r.kubeSystem()
	out := make([]inventory.Webhook, len(seen))
	for i, s := range seen {
		out[i] = s.webhook
		out[i].CoversKubeSystem = s.namespaces.Matches(kubeSystem)
	}
	return out, omitted
}

func apiServiceOrder(a, b inventory.APIService) int {
	return cmp.Or(refOrder(a.Object, b.Object), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version))
}

// apiService records an aggregated APIService (one a service backs) and, when the object
// carries its status, its Available condition. Local ones, served by kube-apiserver itself,
// are left out.
func (r *Recorder) apiService(obj map[string]any, ref inventory.ObjectRef) {
	spec := mapAt(obj, "spec")
	svc := serviceRef(spec["service"])
	if svc == nil {
		return
	}
	a := inventory.APIService{
		Object: ref, Group: inventory.BoundString(str(spec, "group")), Version: inventory.BoundString(str(spec, "version")),
		Service: svc,
	}
	for _, c := range listAt(obj, "status", "conditions") {
		if str(c, "type") == "Available" {
			a.Available = inventory.BoundString(str(c, "status"))
			a.Reason = inventory.BoundString(str(c, "reason"))
			a.Message = inventory.BoundString(str(c, "message"))
		}
	}
	r.apiServices.add(a, apiServiceOrder)
}

func conversionOrder(a, b inventory.Conversion) int {
	return cmp.Or(refOrder(a.CRD, b.CRD), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind))
}

// conversion records a CustomResourceDefinition that converts through a webhook: v1's
// spec.conversion.webhook.clientConfig, v1beta1's spec.conversion.webhookClientConfig. A URL
// is noted, never recorded.
func (r *Recorder) conversion(obj map[string]any, ref inventory.ObjectRef) {
	spec := mapAt(obj, "spec")
	conv := mapAt(spec, "conversion")
	if str(conv, "strategy") != "Webhook" {
		return
	}
	client := mapAt(conv, "webhook", "clientConfig")
	if client == nil {
		client = mapAt(conv, "webhookClientConfig")
	}
	c := inventory.Conversion{
		CRD: ref, Group: inventory.BoundString(str(spec, "group")), Kind: inventory.BoundString(str(spec, "names", "kind")),
		Service: serviceRef(client["service"]),
	}
	if u, ok := client["url"].(string); ok && u != "" {
		c.URL = true
	}
	r.conversions.add(c, conversionOrder)
}
