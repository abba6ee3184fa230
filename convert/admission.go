package convert

import yaml "go.yaml.in/yaml/v3"

// Webhook configurations of admissionregistration.k8s.io, as
// pkg/apis/admissionregistration/{v1beta1,v1}/defaults.go default them: the fields are the
// same, the defaults are not. v1beta1 fails open (failurePolicy Ignore), matches exactly
// (matchPolicy Exact), waits 30 s and sends v1beta1 reviews; v1 fails closed, matches
// equivalent versions, waits 10 s and requires the review versions and the side effects to be
// written. An unset field of the old version is written out with its old default so the
// webhook behaves as before; sideEffects Unknown or Some (the v1beta1 default is Unknown) has
// no v1 value and needs the webhook's owner to say None or NoneOnDryRun.

const admissionV1beta1, admissionV1 = "admissionregistration.k8s.io/v1beta1/", "admissionregistration.k8s.io/v1/"

func init() {
	register(admissionV1beta1+"ValidatingWebhookConfiguration", admissionV1+"ValidatingWebhookConfiguration", webhooksToV1)
	register(admissionV1beta1+"MutatingWebhookConfiguration", admissionV1+"MutatingWebhookConfiguration", webhooksToV1)
	// The admission policies have the same fields and defaults (failurePolicy Fail, matchPolicy
	// Equivalent, empty selectors) in v1beta1 and v1.
	register(admissionV1beta1+"MutatingAdmissionPolicy", admissionV1+"MutatingAdmissionPolicy", identical)
	register(admissionV1beta1+"MutatingAdmissionPolicyBinding", admissionV1+"MutatingAdmissionPolicyBinding", identical)
}

// webhookDefault is a v1beta1 default that v1 changed.
type webhookDefault struct {
	field, after string
	old          func() *yaml.Node
	v1           string
}

var webhookDefaults = []webhookDefault{
	{"failurePolicy", "rules", func() *yaml.Node { return str("Ignore") }, "Fail"},
	{"matchPolicy", "failurePolicy", func() *yaml.Node { return str("Exact") }, "Equivalent"},
	{"timeoutSeconds", "sideEffects", func() *yaml.Node { return integer(30) }, "10"},
	{"admissionReviewVersions", "timeoutSeconds", func() *yaml.Node { return strs("v1beta1") }, "required"},
}

func webhooksToV1(s *State) {
	each(get(s.Obj, "webhooks"), func(i int, wh *yaml.Node) {
		name := scalarAt(wh, "name")
		if wh.Kind != yaml.MappingNode {
			s.Manual(pointer("webhooks", i), wh, "webhook %d is not a mapping", i)
			return
		}
		sideEffectsToV1(s, i, name, wh)
		for _, d := range webhookDefaults {
			v := get(wh, d.field)
			if !isNull(v) && !(v.Kind == yaml.SequenceNode && len(v.Content) == 0) {
				continue
			}
			setAfter(wh, d.after, d.field, d.old())
			s.Note(pointer("webhooks", i, d.field), keyNode(wh, "name"),
				"webhook %q: %s written as v1beta1's default %s (v1: %s)", name, d.field, display(d.old()), d.v1)
		}
	})
}

// sideEffectsToV1 asks for a choice where v1 has no value for the webhook's side effects.
func sideEffectsToV1(s *State, i int, name string, wh *yaml.Node) {
	v := get(wh, "sideEffects")
	switch {
	case isNull(v):
		s.Manual(pointer("webhooks", i, "sideEffects"), wh,
			"webhook %q: sideEffects unset means Unknown in v1beta1, which v1 refuses: write None or NoneOnDryRun once the webhook has no side effects on dry-run requests", name)
	case v.Value == "Unknown" || v.Value == "Some":
		s.Manual(pointer("webhooks", i, "sideEffects"), v,
			"webhook %q: sideEffects %s is refused by v1: write None or NoneOnDryRun once the webhook has no side effects on dry-run requests", name, v.Value)
	}
}

// display renders a small node on one line for a message.
func display(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		out := "["
		for i, c := range n.Content {
			if i > 0 {
				out += ", "
			}
			out += c.Value
		}
		return out + "]"
	}
	return n.Value
}
