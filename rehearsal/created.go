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

// createdSet is what a rehearsal created for real on a test cluster: the namespaces and CRDs
// its objects needed and the cluster lacked. Only those are ever written, and all are deleted
// when the Server closes.
type createdSet struct {
	mu         sync.Mutex
	namespaces []string
	crds       []string
}

func (c *createdSet) add(gvr schema.GroupVersionResource, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gvr == crdsGVR {
		c.crds = append(c.crds, name)
	} else {
		c.namespaces = append(c.namespaces, name)
	}
}

// remove deletes what was created, CRDs first (their custom resources go with them), within a
// minute of its own: it runs after the replay's context has ended.
func (c *createdSet) remove(cfg *rest.Config) error {
	c.mu.Lock()
	crds, namespaces := c.crds, c.namespaces
	c.crds, c.namespaces = nil, nil
	c.mu.Unlock()
	if len(crds)+len(namespaces) == 0 {
		return nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("remove what the rehearsal created: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, set := range []struct {
		gvr   schema.GroupVersionResource
		names []string
	}{{crdsGVR, crds}, {namespacesGVR, namespaces}} {
		sort.Strings(set.names)
		for _, name := range set.names {
			err := dyn.Resource(set.gvr).Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s %s the rehearsal created: %w", set.gvr.Resource, name, err))
			}
		}
	}
	return errors.Join(errs...)
}
