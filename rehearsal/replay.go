package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upgradescope/upgradescope/inventory"
)

// DefaultFieldManager is the manager an object without one of its own is applied as.
const DefaultFieldManager = "upgradescope-rehearsal"

// Reasons an object was not replayed, besides the collectors' own (Skipped.Reason).
const (
	ReasonTimeout          = "timeout"
	ReasonCRDMissing       = "crd missing"
	ReasonNotServed        = "not served"
	ReasonNamespaceMissing = "namespace missing"
	ReasonNoName           = "no name"
	ReasonForbidden        = "forbidden"
	ReasonServerError      = "server error"
	ReasonError            = "error"
)

// Defaults of Options.
const (
	DefaultConcurrency    = 8
	DefaultTimeout        = 5 * time.Minute
	DefaultRequestTimeout = 30 * time.Second
)

// Options bound a replay.
type Options struct {
	// Concurrency is how many requests are in flight at once (DefaultConcurrency when 0).
	Concurrency int
	// Timeout bounds the whole replay (DefaultTimeout when 0): what was not replayed by then
	// is not replayed, reason "timeout". RequestTimeout bounds one request.
	Timeout, RequestTimeout time.Duration
	// Target is the minor the server must serve ("1.35"); it goes into the section.
	Target string
}

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	return o
}

// Replay sends objs to s in dependency order: the CRDs, namespaces and pod classes they need
// are created for real first (on a test cluster only those it lacks, and Close removes them), then every
// other object with server-side apply and dryRun=All. It records what the server refused with
// its reason and message, and what could not be replayed (skipped, with the collectors' own
// reasons); the lists are sorted and bounded. An error means the replay could not begin.
func Replay(ctx context.Context, s *Server, objs []Object, skipped []Skipped, opts Options) (*inventory.Rehearsal, error) {
	opts = opts.withDefaults()
	r, err := newReplayer(s, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	for _, sk := range skipped {
		r.notReplayed(skippedRecord(sk))
	}
	items := prepare(objs)
	crds, rest := split(items, isCRD)
	r.createCRDs(ctx, crds)
	r.mapper.Reset()
	rest = r.mapAll(ctx, rest)
	namespaces, rest := split(rest, isNamespace)
	r.createNamespaces(ctx, namespaces, rest)
	classes, rest := split(rest, isPodClass)
	r.createPodClasses(ctx, classes)
	for _, phase := range phases(rest) {
		r.run(ctx, phase, r.dryRun)
	}
	return r.section(s, opts.Target, len(objs)+len(skipped), converted(objs)), nil
}

// item is one object on its way: the stripped copy sent, and where it maps.
type item struct {
	src     Object
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
}

type replayer struct {
	s      *Server
	opts   Options
	dyn    dynamic.Interface
	disc   discovery.DiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper

	mu         sync.Mutex
	accepted   int
	rejected   []inventory.RehearsalObject
	unreplayed []inventory.RehearsalObject
	// missingNamespaces says why a namespace the objects need could not be created.
	missingNamespaces map[string]string
}

func newReplayer(s *Server, opts Options) (*replayer, error) {
	// The server's warnings (a deprecated API, a deprecated annotation) are what the rules
	// judge already; client-go would log each on stderr.
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("rehearsal client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("rehearsal discovery: %w", err)
	}
	return &replayer{
		s: s, opts: opts, dyn: dyn, disc: disc,
		mapper:            restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		missingNamespaces: map[string]string{},
	}, nil
}

func split(items []*item, match func(*item) bool) (matched, rest []*item) {
	for _, it := range items {
		if match(it) {
			matched = append(matched, it)
		} else {
			rest = append(rest, it)
		}
	}
	return matched, rest
}

func isCRD(it *item) bool {
	return it.obj.GetAPIVersion() == "apiextensions.k8s.io/v1" && it.obj.GetKind() == "CustomResourceDefinition"
}

func isNamespace(it *item) bool {
	return it.obj.GetAPIVersion() == "v1" && it.obj.GetKind() == "Namespace"
}

func converted(objs []Object) int {
	n := 0
	for _, o := range objs {
		if o.OriginalAPIVersion != "" {
			n++
		}
	}
	return n
}

// mapAll finds each object's resource and scope; what the server has no resource for is not
// replayed ("crd missing", or "not served" for a group it serves at other versions).
func (r *replayer) mapAll(ctx context.Context, items []*item) []*item {
	var mapped []*item
	for _, it := range items {
		gvk := it.obj.GroupVersionKind()
		m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case err == nil:
			it.mapping = m
			if m.Scope.Name() == meta.RESTScopeNameNamespace && it.obj.GetNamespace() == "" {
				it.obj.SetNamespace(metav1.NamespaceDefault) // as kubectl apply does
			} else if m.Scope.Name() != meta.RESTScopeNameNamespace {
				it.obj.SetNamespace("")
			}
			mapped = append(mapped, it)
		case meta.IsNoMatchError(err):
			r.notReplayed(r.unmapped(it, gvk))
		default:
			r.notReplayed(record(it, ReasonError, "find its resource: "+err.Error()))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return mapped
}

// unmapped says why the server has no resource for gvk: a group it does not serve at all is
// a CRD that is missing; a group it serves at other versions is a version it does not serve.
func (r *replayer) unmapped(it *item, gvk schema.GroupVersionKind) inventory.RehearsalObject {
	if groups, err := r.disc.ServerGroups(); err == nil {
		for _, g := range groups.Groups {
			if g.Name == gvk.Group {
				return record(it, ReasonNotServed, fmt.Sprintf("the API server serves no %s at %s", gvk.Kind, gvk.GroupVersion()))
			}
		}
	}
	if gvk.Group == "" {
		return record(it, ReasonNotServed, fmt.Sprintf("the API server serves no %s at %s", gvk.Kind, gvk.Version))
	}
	return record(it, ReasonCRDMissing, fmt.Sprintf("no CustomResourceDefinition serves %s at %s: add the CRD to the objects replayed", gvk.Kind, gvk.GroupVersion()))
}

// run replays items with opts.Concurrency workers, each through do.
func (r *replayer) run(ctx context.Context, items []*item, do func(context.Context, *item)) {
	var g errgroup.Group
	g.SetLimit(r.opts.Concurrency)
	for _, it := range items {
		g.Go(func() error { do(ctx, it); return nil })
	}
	_ = g.Wait() // do records its own errors
}

// dryRun applies one object with dryRun=All and records the server's answer.
func (r *replayer) dryRun(ctx context.Context, it *item) {
	if ctx.Err() != nil {
		r.answer(it, ctx.Err())
		return
	}
	if why, ok := r.missingNamespace(it.obj.GetNamespace()); ok {
		r.notReplayed(record(it, ReasonNamespaceMissing, why))
		return
	}
	r.answer(it, r.apply(ctx, it, it.obj, true))
}

// apply sends obj as it's (server-side apply, forced, as its field manager).
func (r *replayer) apply(ctx context.Context, it *item, obj *unstructured.Unstructured, dryRun bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if obj.GetName() == "" {
		return errNoName
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	opts := metav1.ApplyOptions{FieldManager: fieldManager(it.src), Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	res := r.dyn.Resource(it.mapping.Resource)
	var err error
	if it.mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		_, err = res.Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, opts)
	} else {
		_, err = res.Apply(ctx, obj.GetName(), obj, opts)
	}
	return err
}

var errNoName = errors.New("server-side apply needs metadata.name (an object with generateName only is created, not applied)")

func fieldManager(o Object) string {
	if o.FieldManager != "" {
		return o.FieldManager
	}
	return DefaultFieldManager
}

// answer records what the server said to one object.
func (r *replayer) answer(it *item, err error) {
	if err == nil {
		r.mu.Lock()
		r.accepted++
		r.mu.Unlock()
		return
	}
	refused, reason, message := judge(err)
	if refused {
		r.reject(record(it, reason, message))
	} else {
		r.notReplayed(record(it, reason, message))
	}
}

// judge says what an answer other than success makes of the object: refused by the server
// (a rejection, a blocker), or not judged (not replayed, so the verdict is unknown), with the
// reason and message recorded.
func judge(err error) (refused bool, reason, message string) {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, errNoName):
		return false, ReasonNoName, err.Error()
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return false, ReasonTimeout, "the replay's time ran out before the API server answered (--rehearse-timeout)"
	case !errors.As(err, &status):
		return false, ReasonError, err.Error()
	}
	st := status.Status()
	switch {
	case authorizationDenied(st):
		return false, ReasonForbidden, "the rehearsal's identity may not apply it, so the server did not judge it: " + st.Message
	case st.Code == http.StatusUnauthorized:
		return false, ReasonForbidden, "the API server did not accept the rehearsal's credentials, so it did not judge it: " + st.Message
	case serverFault(st):
		return false, ReasonServerError, st.Message
	}
	reason = string(st.Reason)
	switch {
	case reason != "":
	case st.Code == http.StatusInternalServerError:
		reason = string(metav1.StatusReasonInternalError)
	default:
		reason = fmt.Sprintf("HTTP %d", st.Code)
	}
	return true, reason, st.Message
}

// rbacDenial is how the authorizer words a refusal ("configmaps \"x\" is forbidden: User
// \"ci\" cannot patch resource \"configmaps\" ..."), before admission ever sees the object.
var rbacDenial = regexp.MustCompile(`is forbidden: User ".*" cannot [a-z]+ resource `)

// authorizationDenied says the identity was refused the request itself (a test cluster's
// kubeconfig without the rights): the object was not judged, which is no rejection of it. An
// admission plugin's 403 (PodSecurity, a namespace being deleted) is a rejection.
func authorizationDenied(st metav1.Status) bool {
	return st.Reason == metav1.StatusReasonForbidden && rbacDenial.MatchString(st.Message)
}

// serverFault says the server failed, or was too busy, to judge the object: 429, and any 5xx
// (an etcd timeout, a proxy's 502 or 504, a webhook it cannot call) but one. A webhook that
// cannot be called is the rehearsal server's, a test cluster's or none, not the target's:
// whether the target's is up when the object is applied says nothing of the object, so it is
// no refusal of it. The one 5xx that is a refusal is server-side apply's typed patch (a
// custom resource with a field of the wrong type), which the server answers with a bare 500.
func serverFault(st metav1.Status) bool {
	switch {
	case st.Code == http.StatusInternalServerError && strings.Contains(st.Message, typedPatchFailure):
		return false
	case st.Code == http.StatusTooManyRequests, st.Code >= http.StatusInternalServerError:
		return true
	}
	return st.Code < http.StatusBadRequest // no refusal either: a status error without a 4xx or 5xx code
}

// typedPatchFailure begins the message of the 500 server-side apply answers when the applied
// object does not fit its type's schema (k8s.io/apimachinery's managedfields).
const typedPatchFailure = "failed to create typed patch object"

func (r *replayer) reject(o inventory.RehearsalObject) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, o)
}

func (r *replayer) notReplayed(o inventory.RehearsalObject) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unreplayed = append(r.unreplayed, o)
}
