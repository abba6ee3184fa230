package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdsGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// createdSet is what a rehearsal created for real on a test cluster: the namespaces, CRDs and
// pod classes (createPodClasses) its objects needed and the cluster lacked. Only those are ever written, and all are deleted
// when the Server closes.
type createdSet struct {
	mu    sync.Mutex
	names map[schema.GroupVersionResource][]string
}

func (c *createdSet) add(gvr schema.GroupVersionResource, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil {
		c.names = map[schema.GroupVersionResource][]string{}
	}
	c.names[gvr] = append(c.names[gvr], name)
}

// removalOrder is CRDs first (their custom resources go with them), namespaces last (what is
// in them goes with them), the cluster-scoped rest between.
func removalOrder(names map[schema.GroupVersionResource][]string) []schema.GroupVersionResource {
	order := make([]schema.GroupVersionResource, 0, len(names))
	for gvr := range names {
		order = append(order, gvr)
	}
	rank := func(g schema.GroupVersionResource) int {
		switch g {
		case crdsGVR:
			return 0
		case namespacesGVR:
			return 2
		}
		return 1
	}
	sort.Slice(order, func(i, j int) bool {
		if ri, rj := rank(order[i]), rank(order[j]); ri != rj {
			return ri < rj
		}
		return order[i].String() < order[j].String()
	})
	return order
}

// remove deletes what was created, in removalOrder, within a minute of its own: it runs after
// the replay's context has ended.
func (c *createdSet) remove(cfg *rest.Config) error {
	c.mu.Lock()
	names := c.names
	c.names = nil
	c.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("remove what the rehearsal created: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, gvr := range removalOrder(names) {
		sort.Strings(names[gvr])
		for _, name := range names[gvr] {
			err := dyn.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s %s the rehearsal created: %w", gvr.Resource, name, err))
			}
		}
	}
	return errors.Join(errs...)
}
