package convert_test

import "testing"

func TestIngressesMoveToNetworkingV1(t *testing.T) {
	runSteps(t, []stepCase{
		{
			name: "a numeric servicePort becomes port.number and a named one port.name",
			in: `
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: a}
spec:
  rules:
    - http:
        paths:
          - path: /
            backend: {serviceName: web, servicePort: 80}
          - path: /api
            backend: {serviceName: api, servicePort: http}`,
			want:   []string{"service:\n                name: web\n                port:\n                  number: 80", "port:\n                  name: http"},
			absent: []string{"serviceName", "servicePort"},
		},
		{
			name: "a quoted number is a port name, as the server reads it",
			in:   "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    serviceName: web\n    servicePort: \"80\"",
			want: []string{"port:\n        name: \"80\""},
		},
		{
			name: "spec.backend becomes spec.defaultBackend",
			in:   "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    serviceName: web\n    servicePort: 80",
			want: []string{"defaultBackend:\n    service:\n      name: web"},
		},
		{
			name:   "a resource backend is kept as it is",
			in:     "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    resource: {apiGroup: x.io, kind: B, name: c}",
			want:   []string{"defaultBackend:\n    resource:\n      apiGroup: x.io\n      kind: B\n      name: c"},
			absent: []string{"service:"},
		},
		{
			name: "a path without pathType gets ImplementationSpecific, the old default, after the path",
			in:   "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n            backend: {serviceName: web, servicePort: 80}",
			want: []string{"- path: /\n            pathType: ImplementationSpecific"},
			note: "defaulted pathType",
		},
		{
			name: "a null pathType is defaulted like an absent one",
			in:   "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n            pathType: null\n            backend: {serviceName: web, servicePort: 80}",
			want: []string{"- path: /\n            pathType: ImplementationSpecific"},
			note: "defaulted pathType",
		},
		{
			name: "a servicePort written in hex is a port number, as the reader resolves it",
			in:   "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    serviceName: web\n    servicePort: 0x50",
			want: []string{"port:\n        number: 0x50"},
		},
		{
			name: "a servicePort tagged as a string is a port name",
			in:   "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    serviceName: web\n    servicePort: !!str 80",
			want: []string{"port:\n        name: !!str 80"},
		},
		{
			name:   "a pathType that is set is kept",
			in:     "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n            pathType: Prefix\n            backend: {serviceName: web, servicePort: 80}",
			want:   []string{"pathType: Prefix"},
			absent: []string{"ImplementationSpecific"},
		},
		{
			name: "an IngressClass changes only its apiVersion",
			in:   "apiVersion: networking.k8s.io/v1beta1\nkind: IngressClass\nmetadata: {name: a}\nspec: {controller: x.io/c}",
			want: []string{"apiVersion: networking.k8s.io/v1\nkind: IngressClass\n"},
		},
		{
			name: "a NetworkPolicy changes only its apiVersion",
			in:   "apiVersion: extensions/v1beta1\nkind: NetworkPolicy\nmetadata: {name: a}\nspec: {podSelector: {}}",
			want: []string{"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"},
		},
	})
}
