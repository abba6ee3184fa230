package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/upgradescope/upgradescope/inventory"
)

// defaultServicePort is the port a webhook, an APIService and a CRD conversion webhook call
// when their service reference names none.
const defaultServicePort = 443

// serviceKey is a service something calls, and the port it calls.
type serviceKey struct {
	namespace, name string
	port            int
}

// serviceRefs are the service references of the section, by the service they name.
func serviceRefs(sec *inventory.Preflight) map[serviceKey][]*inventory.ServiceRef {
	out := map[serviceKey][]*inventory.ServiceRef{}
	add := func(ref *inventory.ServiceRef) {
		if ref == nil {
			return
		}
		k := serviceKey{ref.Namespace, ref.Name, ref.Port}
		if k.port == 0 {
			k.port = defaultServicePort
		}
		out[k] = append(out[k], ref)
	}
	for i := range sec.Webhooks {
		add(sec.Webhooks[i].Service)
	}
	for i := range sec.APIServices {
		add(sec.APIServices[i].Service)
	}
	for i := range sec.Conversions {
		add(sec.Conversions[i].Service)
	}
	return out
}

// endpoints fills every service reference of the section: whether the service exists, and
// its ready endpoints on the port called. Only the services named are read: each by a list
// of its namespace's services with a field selector on its name, and its EndpointSlices by
// the kubernetes.io/service-name label, as the EndpointSlice API says a service's slices are
// found. A read that fails leaves those references unknown (Found and ReadyEndpoints
// absent); a refused one makes the capability unavailable, naming the permission.
func (p *preflightPass) endpoints(ctx context.Context, sec *inventory.Preflight) inventory.Capability {
	refs := serviceRefs(sec)
	keys := make([]serviceKey, 0, len(refs))
	for k := range refs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b serviceKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name), cmp.Compare(a.port, b.port))
	})
	var skipped []string
	read := 0
	// Keys are sorted by service, then port: each service is read once, its ready endpoints
	// counted for every port called, and its EndpointSlices dropped before the next.
	for i := 0; i < len(keys); {
		ns, name := keys[i].namespace, keys[i].name
		j := i
		for j < len(keys) && keys[j].namespace == ns && keys[j].name == name {
			j++
		}
		if read == inventory.MaxPreflightItems {
			skipped = append(skipped, fmt.Sprintf("service references past the first %d services not read", inventory.MaxPreflightItems))
			break
		}
		svc, err := p.readService(ctx, ns, name)
		if denied := (*deniedError)(nil); errors.As(err, &denied) {
			return denied.access.unavailable(denied.err)
		}
		if err != nil {
			skipped = append(skipped, err.Error())
			i = j
			continue
		}
		read++
		for _, k := range keys[i:j] {
			found, ready := svc.found, svc.readyOn(k.port)
			for _, ref := range refs[k] {
				ref.Found = &found
				if ready != nil {
					n := *ready
					ref.ReadyEndpoints = &n
				}
			}
		}
		i = j
	}
	p.counts[inventory.CapEndpoints] = read
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: fmt.Sprintf("%d service(s) not read", len(skipped)), Skipped: inventory.CapSkipped(skipped)}
	}
	return inventory.Capability{Available: true}
}

// deniedError is a read the identity may not make.
type deniedError struct {
	access access
	err    error
}

func (e *deniedError) Error() string { return e.access.failed(e.err) }

// service is a service and its EndpointSlices, as far as a readiness count needs them.
type service struct {
	found, externalName bool
	// ports maps each service port to its name, which its EndpointSlices' ports carry.
	ports  map[int]string
	slices []*unstructured.Unstructured
}

// readService reads one service and its EndpointSlices (discovery.k8s.io/v1, v1beta1 before
// 1.21).
func (p *preflightPass) readService(ctx context.Context, namespace, name string) (*service, error) {
	svc := &service{ports: map[int]string{}}
	services := access{verb: "list", resource: "services", namespace: namespace}
	err := p.listServed(ctx, "", "services", namespace, []string{"v1"}, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()},
		func(_ string, page *unstructured.UnstructuredList) {
			for _, item := range page.Items {
				if item.GetName() != name {
					continue
				}
				svc.found = true
				kind, _, _ := unstructured.NestedString(item.Object, "spec", "type")
				svc.externalName = kind == "ExternalName"
				ports, _, _ := unstructured.NestedSlice(item.Object, "spec", "ports")
				for _, raw := range ports {
					port, _ := raw.(map[string]any)
					number, _, _ := unstructured.NestedInt64(port, "port")
					portName, _, _ := unstructured.NestedString(port, "name")
					svc.ports[int(number)] = portName
				}
			}
		})
	if err != nil {
		return nil, readError(services, err)
	}
	if !svc.found || svc.externalName {
		return svc, nil
	}
	slicesRead := access{verb: "list", group: "discovery.k8s.io", resource: "endpointslices", namespace: namespace}
	err = p.listServed(ctx, "discovery.k8s.io", "endpointslices", namespace, []string{"v1", "v1beta1"},
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name},
		func(_ string, page *unstructured.UnstructuredList) {
			for i := range page.Items {
				svc.slices = append(svc.slices, &page.Items[i])
			}
		})
	if err != nil {
		return nil, readError(slicesRead, err)
	}
	return svc, nil
}

func readError(a access, err error) error {
	if isDenied(err) {
		return &deniedError{access: a, err: err}
	}
	return errors.New(a.failed(err))
}

// readyOn counts the service's ready endpoints serving port: the endpoints of its
// EndpointSlices that carry the service port's name, whose conditions.ready is true or
// unset ("a nil value should be interpreted as true", k8s.io/api discovery/v1
// EndpointConditions). An endpoint listed in two slices (an IPv4 and an IPv6 one) counts
// once. Nil for a service that is not there (no endpoints to count: 0) or an ExternalName
// one, which has no endpoints by design.
func (s *service) readyOn(port int) *int {
	zero := 0
	switch {
	case !s.found:
		return &zero
	case s.externalName:
		return nil
	}
	portName, ok := s.ports[port]
	if !ok {
		return &zero
	}
	seen := map[string]bool{}
	for _, slice := range s.slices {
		ports, _, _ := unstructured.NestedSlice(slice.Object, "ports")
		serves := false
		for _, raw := range ports {
			p, _ := raw.(map[string]any)
			name, _, _ := unstructured.NestedString(p, "name")
			serves = serves || name == portName
		}
		if !serves {
			continue
		}
		endpoints, _, _ := unstructured.NestedSlice(slice.Object, "endpoints")
		for _, raw := range endpoints {
			e, _ := raw.(map[string]any)
			if ready, set, _ := unstructured.NestedBool(e, "conditions", "ready"); set && !ready {
				continue
			}
			seen[endpointID(e)] = true
		}
	}
	n := len(seen)
	return &n
}

// endpointID tells endpoints apart: the object behind it, else its first address.
func endpointID(e map[string]any) string {
	if kind, _, _ := unstructured.NestedString(e, "targetRef", "kind"); kind != "" {
		ns, _, _ := unstructured.NestedString(e, "targetRef", "namespace")
		name, _, _ := unstructured.NestedString(e, "targetRef", "name")
		return kind + "/" + ns + "/" + name
	}
	addresses, _, _ := unstructured.NestedStringSlice(e, "addresses")
	if len(addresses) > 0 {
		return "address/" + addresses[0]
	}
	return fmt.Sprintf("endpoint/%p", e)
}
