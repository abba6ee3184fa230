package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// bare500 is how kube-apiserver answers an error of its own that is no status
// (responsewriters.ErrorToAPIStatus): code 500, no reason, the error's text.
func bare500(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: message}}
}

// Only an answer about the object is a refusal (a blocker); an answer about the server, its
// credentials or the time is no judgment of the object, so it is not replayed (unknown).
func TestOnlyAnAnswerAboutTheObjectIsARefusal(t *testing.T) {
	configmaps := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name    string
		err     error
		refused bool
		reason  string
	}{
		{"a field of the wrong type in a custom resource (server-side apply's typed patch, 500)",
			bare500("failed to create typed patch object (rehearse.example.com/v1, Kind=Widget) shop/w2: .spec.size: expected numeric (int or float), got string"),
			true, "InternalError"},
		{"an invalid object (422)",
			apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "Shop_1", field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "Shop_1", "a DNS-1035 label")}),
			true, "Invalid"},
		{"admission refusing it (PodSecurity, 403)",
			apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "root", errors.New(`violates PodSecurity "restricted:latest": privileged`)),
			true, "Forbidden"},
		{"a webhook that was called and said no",
			&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest, Message: `admission webhook "deny.example.com" denied the request: no latest tags`}},
			true, "BadRequest"},
		{"an object too large (413)", apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true, "RequestEntityTooLarge"},
		{"etcd timing out (a bare 500)", bare500("etcdserver: request timed out"), false, ReasonServerError},
		{"etcd timing out (an internal error)", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), false, ReasonServerError},
		{"a webhook the server cannot call (500): the test cluster's, not the target's",
			apierrors.NewInternalError(errors.New(`failed calling webhook "check.example.com": failed to call webhook: Post "https://check.svc:443/validate?timeout=10s": dial tcp 10.0.0.9:443: connect: connection refused`)),
			false, ReasonServerError},
		{"a proxy's 502", apierrors.NewGenericServerResponse(502, "PATCH", configmaps, "settings", "<html>Bad Gateway</html>", 0, true), false, ReasonServerError},
		{"a proxy's 504", apierrors.NewGenericServerResponse(504, "PATCH", configmaps, "settings", "", 0, true), false, ReasonServerError},
		{"the server's own request timeout (504)", apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0), false, ReasonServerError},
		{"the server timing out (500 ServerTimeout)", apierrors.NewServerTimeout(configmaps, "patch", 0), false, ReasonServerError},
		{"a server unavailable (503)", apierrors.NewServiceUnavailable("etcd is down"), false, ReasonServerError},
		{"too many requests (429)", apierrors.NewTooManyRequests("slow down", 1), false, ReasonServerError},
		{"a proxy's 502 quoting a typed patch failure is still the server's",
			apierrors.NewGenericServerResponse(502, "PATCH", configmaps, "settings", "failed to create typed patch object", 0, true), false, ReasonServerError},
		{"the authorizer refusing the identity (403)",
			apierrors.NewForbidden(configmaps, "settings", errors.New(`User "ci" cannot patch resource "configmaps" in API group "" in the namespace "shop"`)),
			false, ReasonForbidden},
		{"credentials not accepted (401)", apierrors.NewUnauthorized("Unauthorized"), false, ReasonForbidden},
		{"the replay's time running out", fmt.Errorf(`Patch "https://127.0.0.1/api": %w`, context.DeadlineExceeded), false, ReasonTimeout},
		{"no name", errNoName, false, ReasonNoName},
		{"no answer at all", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), false, ReasonError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused, reason, message := judge(tt.err)
			if refused != tt.refused || reason != tt.reason || message == "" {
				t.Errorf("judge = refused %v, reason %q, message %q; want refused %v, reason %q", refused, reason, message, tt.refused, tt.reason)
			}
		})
	}
}
