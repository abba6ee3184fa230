package convert

import "testing"

func TestWebhookConfigurationsKeepTheirV1beta1Behaviour(t *testing.T) {
	runStepCases(t, []stepCase{
		{name: "unset fields are written with v1beta1's defaults", in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingWebhookConfiguration
metadata:
  name: policy
webhooks:
  - name: policy.example.com
    clientConfig:
      service: {namespace: policy, name: webhook}
    rules:
      - operations: [CREATE]
        apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
    sideEffects: None
`, want: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: policy
webhooks:
  - name: policy.example.com
    clientConfig:
      service: {namespace: policy, name: webhook}
    rules:
      - operations: [CREATE]
        apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
    failurePolicy: Ignore
    matchPolicy: Exact
    sideEffects: None
    timeoutSeconds: 30
    admissionReviewVersions:
      - v1beta1
`, notes: []string{"failurePolicy written as v1beta1's default Ignore (v1: Fail)", "matchPolicy", "timeoutSeconds", "admissionReviewVersions"}},
		{name: "fields the object sets are kept", in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingWebhookConfiguration
metadata:
  name: inject
webhooks:
  - name: inject.example.com
    clientConfig:
      url: https://inject.example.com/mutate
    failurePolicy: Fail
    matchPolicy: Equivalent
    sideEffects: NoneOnDryRun
    timeoutSeconds: 5
    admissionReviewVersions: [v1, v1beta1]
    reinvocationPolicy: IfNeeded
`, want: `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: inject
webhooks:
  - name: inject.example.com
    clientConfig:
      url: https://inject.example.com/mutate
    failurePolicy: Fail
    matchPolicy: Equivalent
    sideEffects: NoneOnDryRun
    timeoutSeconds: 5
    admissionReviewVersions: [v1, v1beta1]
    reinvocationPolicy: IfNeeded
`},
		{name: "unset side effects need the webhook's owner", in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingWebhookConfiguration
metadata:
  name: inject
webhooks:
  - name: inject.example.com
    clientConfig:
      url: https://inject.example.com/mutate
`, manual: []string{"sideEffects unset means Unknown in v1beta1, which v1 refuses"}},
		{name: "side effects Some need the webhook's owner", in: `
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingWebhookConfiguration
metadata:
  name: audit
webhooks:
  - name: audit.example.com
    clientConfig:
      url: https://audit.example.com/
    sideEffects: Some
`, manual: []string{"sideEffects Some is refused by v1"}},
	})
}
