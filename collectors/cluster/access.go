package cluster

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upgradescope/upgradescope/inventory"
)

// access is one read the collector makes, named as RBAC grants it, so that a refusal says
// which permission is missing.
type access struct {
	verb, group, resource string
	// namespace is empty at the cluster scope; name is empty for a list.
	namespace, name string
}

// String reads "list poddisruptionbudgets.policy at the cluster scope" or "get
// configmaps/kube-proxy in namespace kube-system".
func (a access) String() string {
	what := a.resource
	if a.group != "" {
		what += "." + a.group
	}
	if a.name != "" {
		what += "/" + a.name
	}
	where := "at the cluster scope"
	if a.namespace != "" {
		where = "in namespace " + a.namespace
	}
	return a.verb + " " + what + " " + where
}

// grant is the RBAC rule that allows the read.
func (a access) grant() string {
	group := "in group " + a.group
	if a.group == "" {
		group = `in the core group ("")`
	}
	s := fmt.Sprintf("grant %s on %s", a.verb, a.resource)
	if a.name != "" {
		s += " named " + a.name
	}
	s += " " + group
	if a.namespace != "" && a.name != "" {
		s += " in namespace " + a.namespace
	}
	return s
}

// failed is the reason a refused or failed read gives: a refusal names the permission to
// grant ("cannot list poddisruptionbudgets.policy at the cluster scope: forbidden; grant
// list on poddisruptionbudgets in group policy").
func (a access) failed(err error) string {
	switch {
	case isDenied(err):
		return fmt.Sprintf("cannot %s: forbidden; %s", a, a.grant())
	case errors.Is(err, context.DeadlineExceeded):
		return a.String() + ": timed out"
	}
	return fmt.Sprintf("%s: %v", a, err)
}

func (a access) unavailable(err error) inventory.Capability {
	return inventory.Capability{Available: false, Reason: a.failed(err)}
}

// isDenied says the API server refused the identity the read.
func isDenied(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}
