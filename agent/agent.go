// Package agent keeps a ClusterReadiness object's status current: each tick collects the
// cluster, reads the object's spec, evaluates every target and writes the status.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// MinInterval is the shortest interval the agent accepts.
const MinInterval = time.Minute

// Options configure an Agent.
type Options struct {
	Name string
	// Targets, when set, are owned by the agent: spec.targets is reset to them every tick.
	Targets      []string
	Interval     time.Duration
	AgentVersion string
	// Collect gives the collection options for an engine: the kb decides which kinds are
	// listed, so a new kb revision changes what the next tick collects.
	Collect func(*engine.Engine) cluster.Options
	// AdviseCharts, when set (--advise-charts), runs the chart advisor on each tick's
	// inventory at the tick's targets, before the evaluation that reads its advice. values
	// are the ones collected beside the inventory: they are never pushed.
	AdviseCharts func(ctx context.Context, eng *engine.Engine, doc *inventory.Document, values charts.Values, targets []string, now time.Time)
	// Audit, when set (--audit-log), adds the audit log's section and capability to each
	// tick's inventory collected at now, within what is left of the collection's budget.
	Audit func(ctx context.Context, doc *inventory.Document, now time.Time)
	Log   *slog.Logger
	Now   func() time.Time
}

// Agent runs ticks. It keeps its collector between ticks (Helm cache, refused lists).
type Agent struct {
	opts      Options
	collector *cluster.Collector
	// Pusher, when set, delivers each tick's inventory to the fleet server.
	Pusher   *push.Client
	policy   *policyset.Set
	objects  dynamic.NamespaceableResourceInterface
	failures int
	// Health is what /readyz and /metrics read.
	Health *Health
}

// New builds an agent that evaluates with policy's current engine.
func New(opts Options, col *cluster.Collector, policy *policyset.Set, dyn dynamic.Interface) *Agent {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	a := &Agent{opts: opts, collector: col, policy: policy, objects: dyn.Resource(crd.GVR), Health: newHealth(opts.Interval)}
	policy.Attach(a.Health.metrics.bundles)
	return a
}

// Run ticks at once, then every interval ±10%, until ctx ends. A failed tick never stops it.
// Between ticks it retries a failed push when its time comes.
func (a *Agent) Run(ctx context.Context) error {
	for {
		out, finished := a.tickUntilStopped(ctx)
		if !finished {
			a.opts.Log.Info("tick interrupted", "interruptedTick", true, "abandoned", true)
			a.opts.Log.Info("agent stopping")
			return nil
		}
		a.logTick(out)
		nextTick := time.Now().Add(time.Duration(float64(a.opts.Interval) * (0.9 + 0.2*rand.Float64())))
		for {
			wake := nextTick
			if retry, ok := a.retryAt(); ok && retry.Before(wake) {
				wake = retry
			}
			select {
			case <-ctx.Done():
				a.opts.Log.Info("agent stopping")
				return nil
			case <-time.After(time.Until(wake)):
			}
			if !wake.Before(nextTick) {
				break
			}
			if res, err := a.Pusher.Retry(ctx); err != nil || res == push.Delivered {
				a.opts.Log.Info("push retried", "push", string(res), "error", errText(err))
			}
		}
	}
}

// StopGrace is how long a stop waits for the tick in flight: a request that ignores
// cancellation (a server that accepts and never answers) must not hold the process.
const StopGrace = 5 * time.Second

// tickUntilStopped runs a tick; after a stop it waits StopGrace at most for it to end.
func (a *Agent) tickUntilStopped(ctx context.Context) (Outcome, bool) {
	done := make(chan Outcome, 1)
	go func() { done <- a.Tick(ctx) }()
	select {
	case out := <-done:
		return out, true
	case <-ctx.Done():
	}
	select {
	case out := <-done:
		return out, true
	case <-time.After(StopGrace):
		return Outcome{}, false
	}
}

func (a *Agent) retryAt() (time.Time, bool) {
	if a.Pusher == nil {
		return time.Time{}, false
	}
	return a.Pusher.NextRetry()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Outcome is what one tick did, for its log line and the health endpoints.
type Outcome struct {
	Duration     time.Duration
	Report       *report.Report
	Capabilities map[string]inventory.Capability
	Push         push.Result
	PushErr      error
	Err          error
	// Interrupted is a tick the agent's own stop cut short: not a failure.
	Interrupted bool
}

// Budget is how long a tick may take and how much of that is kept for writing the status,
// the marker and the push: half the interval, between 30 s and 5 min, with 30 s reserved (half
// the deadline under a minute). Collection gets the rest, so a slow cluster yields a partial
// inventory, judged unknown, rather than a tick that never ends.
func Budget(interval time.Duration) (deadline, reserve time.Duration) {
	deadline = min(max(interval/2, 30*time.Second), 5*time.Minute)
	reserve = 30 * time.Second
	if deadline < time.Minute {
		reserve = deadline / 2
	}
	return deadline, reserve
}

// Tick collects, evaluates and writes the status once, within the tick budget.
func (a *Agent) Tick(ctx context.Context) Outcome {
	start := a.opts.Now()
	out := Outcome{Push: "off"}
	deadline, reserve := Budget(a.opts.Interval)
	tctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	var doc *inventory.Document
	out.Report, doc, out.Err = a.tick(tctx, start, deadline-reserve)
	out.Capabilities = doc.Capabilities
	// The status is written whether or not a server is configured; the push follows it.
	if a.Pusher != nil {
		out.Push, out.PushErr = a.Pusher.Offer(tctx, doc)
	}
	out.Duration = a.opts.Now().Sub(start)
	out.Interrupted = ctx.Err() != nil
	return out
}

func (a *Agent) tick(ctx context.Context, now time.Time, collectFor time.Duration) (*report.Report, *inventory.Document, error) {
	// One engine for the whole tick: a bundle swap lands at the next one.
	eng, revs := a.policy.Engine()
	cctx, cancel := context.WithTimeout(ctx, collectFor)
	doc := a.collector.Collect(cctx, now, a.opts.Collect(eng))
	if a.opts.Audit != nil {
		a.opts.Audit(cctx, doc, now)
	}
	cancel()
	rep, err := a.judge(ctx, eng, crdRevisions(revs), doc, now)
	return rep, doc, err
}

func (a *Agent) judge(ctx context.Context, eng *engine.Engine, revs []crd.BundleRevision, doc *inventory.Document, now time.Time) (*report.Report, error) {
	obj, err := a.ensureObject(ctx)
	if err != nil {
		return nil, err
	}
	var cr crd.ClusterReadiness
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cr); err != nil {
		return nil, fmt.Errorf("read ClusterReadiness %s: %w", a.opts.Name, err)
	}
	targets, notes := resolveTargets(cr.Spec.Targets, doc)
	rules, ruleNotes := ignoreRules(cr.Spec.Ignore)
	notes = append(notes, ruleNotes...)
	var rep *report.Report
	if len(targets) > 0 && a.opts.AdviseCharts != nil {
		a.collector.ResolveHelmRepositories(ctx, doc)
		values := charts.Values{Helm: a.collector.ReleaseValues(), GitOps: a.collector.GitOpsValues(),
			Credentials: charts.NewCredentials(a.collector.GitOpsCredentials())}
		a.opts.AdviseCharts(ctx, eng, doc, values, targets, now)
	}
	if len(targets) > 0 {
		if rep, err = eng.Evaluate(ctx, doc, targets, now, engine.WithIgnore(rules)); err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		a.policy.Remember(doc, targets)
		for _, r := range rep.ExpiredIgnores {
			notes = append(notes, fmt.Sprintf("ignore: spec.ignore[%d] expired on %s", r.Index, r.Expires))
		}
	}
	ev := crd.Evaluation{Report: rep, Generation: obj.GetGeneration(), ServerVersion: doc.ServerVersion,
		AgentVersion: a.opts.AgentVersion, Notes: notes, Now: now, Bundles: revs, BundleUpdate: crdUpdate(a.policy.Update())}
	if err := a.writeStatus(ctx, obj, ev); err != nil {
		return rep, a.markStatusError(ctx, err)
	}
	if _, marked := obj.GetAnnotations()[crd.StatusErrorAnnotation]; marked {
		if err := a.clearStatusError(ctx); err != nil {
			return rep, err
		}
	}
	if v := doc.Capabilities[inventory.CapVersions]; !v.Available {
		return rep, fmt.Errorf("cluster not readable: %s", v.Reason)
	}
	return rep, nil
}

// ensureObject reads the ClusterReadiness, creating it when absent, and resets spec.targets
// when the agent owns them.
func (a *Agent) ensureObject(ctx context.Context) (*unstructured.Unstructured, error) {
	obj, err := a.objects.Get(ctx, a.opts.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": crd.Group + "/" + crd.Version, "kind": crd.Kind,
			"metadata": map[string]any{"name": a.opts.Name}, "spec": map[string]any{},
		}}
		obj, err = a.objects.Create(ctx, obj, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("read ClusterReadiness %s: %w", a.opts.Name, err)
	}
	if len(a.opts.Targets) == 0 {
		return obj, nil
	}
	current, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "targets")
	if slices.Equal(current, a.opts.Targets) {
		return obj, nil
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"targets": a.opts.Targets}})
	obj, err = a.objects.Patch(ctx, a.opts.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("reset spec.targets of ClusterReadiness %s: %w", a.opts.Name, err)
	}
	return obj, nil
}

// writeStatus writes over the tick's one read of the object; after a conflict it reads again,
// so a concurrent writer costs a retry, never a lost status.
func (a *Agent) writeStatus(ctx context.Context, obj *unstructured.Unstructured, ev crd.Evaluation) error {
	retrying := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if retrying {
			fresh, err := a.objects.Get(ctx, a.opts.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			obj = fresh
		}
		retrying = true
		var cr crd.ClusterReadiness
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cr); err != nil {
			return err
		}
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr(crd.BuildStatus(cr.Status, ev)))
		if err != nil {
			return err
		}
		obj.Object["status"] = st
		_, err = a.objects.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("write status of ClusterReadiness %s: %w", a.opts.Name, err)
	}
	return nil
}

// markStatusError sets the status-error annotation while the status cannot be written, so
// `kubectl get` shows why the status is stale; err is returned either way.
func (a *Agent) markStatusError(ctx context.Context, err error) error {
	msg := err.Error()
	if len(msg) > crd.MaxNote {
		msg = msg[:crd.MaxNote]
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{crd.StatusErrorAnnotation: msg}}})
	if _, perr := a.objects.Patch(ctx, a.opts.Name, types.MergePatchType, patch, metav1.PatchOptions{}); perr != nil {
		return fmt.Errorf("%w; and the %s annotation could not be set: %v", err, crd.StatusErrorAnnotation, perr)
	}
	return err
}

// clearStatusError removes the marker once a status was written again.
func (a *Agent) clearStatusError(ctx context.Context) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{crd.StatusErrorAnnotation: nil}}})
	if _, err := a.objects.Patch(ctx, a.opts.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("clear the %s annotation of ClusterReadiness %s: %w", crd.StatusErrorAnnotation, a.opts.Name, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// logTick writes exactly one line per tick.
func (a *Agent) logTick(out Outcome) {
	if !out.Interrupted {
		a.Health.record(out, a.opts.Now())
	}
	attrs := []any{"duration", out.Duration.Round(time.Millisecond).String(), "push", string(out.Push)}
	if out.PushErr != nil {
		attrs = append(attrs, "pushError", out.PushErr.Error())
	}
	if out.Report != nil {
		for _, t := range out.Report.Targets {
			attrs = append(attrs, "targets."+t.Target+".verdict", t.Verdict, "targets."+t.Target+".score", t.Score,
				"targets."+t.Target+".blockers", t.Blockers)
		}
	}
	if out.Interrupted {
		// The agent is stopping: a tick cut short is not a failure.
		a.opts.Log.Info("tick interrupted", append(attrs, "interruptedTick", true)...)
		return
	}
	if out.Err != nil {
		a.failures++
		a.opts.Log.Error("tick failed", append(attrs, "error", out.Err.Error(), "consecutiveFailures", a.failures)...)
		return
	}
	a.failures = 0
	a.opts.Log.Info("tick complete", append(attrs, "consecutiveFailures", 0)...)
}
