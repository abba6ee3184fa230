package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/metadata"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// HelmFieldManager is the manager Helm writes as, server-side apply (Helm 4) or update
// (Helm 3): a release's objects are replayed as it.
const HelmFieldManager = "helm"

// RehearsalObjects collects the live objects and every installed Helm release's manifest
// objects for a rehearsal, within one set of bounds (LiveRehearsalObjects, then
// HelmRehearsalObjects), and replays an object a release manages once: from the manifest
// when the manifest writes an apiVersion the target does not serve (the next `helm upgrade`
// sends it), else as it is live. Skips come in the order the collection met them.
func (c *Collector) RehearsalObjects(ctx context.Context, opts RehearsalOptions) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	opts = opts.withDefaults()
	b := &replayBudget{objects: opts.MaxObjects, bytes: opts.MaxBytes}
	live, skipped, err := c.liveRehearsal(ctx, opts, b)
	if err != nil {
		return nil, nil, err
	}
	releases, helmSkipped, err := c.helmRehearsal(ctx, opts, b)
	if err != nil {
		return nil, nil, err
	}
	return mergeReleases(live, releases), onePerResource(append(skipped, helmSkipped...)), nil
}

// onePerResource drops a resource's second skip for the same reason: the Helm records are
// Secrets and ConfigMaps, which the live listing may have been refused already.
func onePerResource(skipped []rehearsal.Skipped) []rehearsal.Skipped {
	seen := map[[3]string]bool{}
	out := skipped[:0]
	for _, s := range skipped {
		k := [3]string{s.APIVersion, s.Kind, s.Reason}
		if s.Name == "" && s.Source.HelmRelease == "" {
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, s)
	}
	return out
}

// HelmRehearsalObjects reads the manifest of every installed Helm release (Helm's storage, as
// Helm reads it) into the objects a rehearsal replays, as the field manager "helm", converted
// when the manifest writes an apiVersion the target does not serve. Manifests are rendered:
// no template is ever met. A release or document that cannot be read is a skip.
func (c *Collector) HelmRehearsalObjects(ctx context.Context, opts RehearsalOptions) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	opts = opts.withDefaults()
	return c.helmRehearsal(ctx, opts, &replayBudget{objects: opts.MaxObjects, bytes: opts.MaxBytes})
}

func (c *Collector) helmRehearsal(ctx context.Context, opts RehearsalOptions, b *replayBudget) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	meta, err := metadata.NewForConfig(c.config)
	if err != nil {
		return nil, nil, fmt.Errorf("create metadata client: %w", err)
	}
	scopes, err := c.kindScopes(ctx)
	if err != nil {
		return nil, nil, err
	}
	m := manifestReader{opts: opts, budget: b, namespaced: scopes}
	for _, d := range []struct{ name, kind string }{{"secrets", "Secret"}, {"configmaps", "ConfigMap"}} {
		records, err := listReleaseRecords(ctx, meta, d.name)
		if err != nil {
			reason, a := SkipListFailed, access{verb: "list", resource: d.name}
			if isDenied(err) {
				reason = SkipForbidden
			}
			m.skip(rehearsal.Skipped{APIVersion: "v1", Kind: d.kind, Reason: reason,
				Message: "Helm release records: " + a.failed(err)})
			continue
		}
		for _, r := range installed(records) {
			rel, err := c.fetchRelease(ctx, d.name, r)
			if err != nil {
				m.skip(rehearsal.Skipped{Source: inventory.RehearsalSource{HelmRelease: r.namespace + "/" + r.name},
					Reason: SkipUnreadable, Message: fmt.Sprintf("read Helm release %s/%s: %v", r.namespace, r.name, err)})
				continue
			}
			m.release(rel)
		}
	}
	return m.objects, m.skipped, nil
}

// kindScopes says, by group and kind ("apps/Deployment"), whether the cluster serves a kind
// namespaced: Helm puts a release's namespaced objects in the release's namespace.
func (c *Collector) kindScopes(ctx context.Context) (map[string]bool, error) {
	servedBy, err := c.discover(ctx)
	if servedBy == nil {
		return nil, fmt.Errorf("discover the cluster's resources: %w", err)
	}
	out := map[string]bool{}
	for gvk, s := range servedBy {
		out[gvk.Group+"/"+gvk.Kind] = s.namespaced
	}
	return out, nil
}

// manifestReader turns releases' manifests into rehearsal objects.
type manifestReader struct {
	opts       RehearsalOptions
	budget     *replayBudget
	namespaced map[string]bool
	objects    []rehearsal.Object
	skipped    []rehearsal.Skipped
}

func (m *manifestReader) skip(s rehearsal.Skipped) { m.skipped = append(m.skipped, s) }

// release reads one release's manifest, document by document.
func (m *manifestReader) release(rel *releasev1.Release) {
	src := inventory.RehearsalSource{HelmRelease: rel.Namespace + "/" + rel.Name}
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(rel.Manifest)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			m.skip(rehearsal.Skipped{Source: src, Reason: SkipUnreadable, Message: fmt.Sprintf("manifest document %d and after: %v", n, err)})
			return
		}
		m.document(rel.Namespace, src, n, doc)
	}
}

// document keeps one manifest document as an object, converted when the target does not
// serve its apiVersion.
func (m *manifestReader) document(namespace string, src inventory.RehearsalSource, n int, doc []byte) {
	if bound := files.NodeBound(doc); bound > files.MaxDocumentNodes {
		m.skip(rehearsal.Skipped{Source: src, Reason: SkipUnreadable, Message: fmt.Sprintf("manifest document %d: more than %d YAML nodes refused", n, files.MaxDocumentNodes)})
		return
	}
	var node yaml.Node
	if err := yaml.Unmarshal(doc, &node); err != nil {
		m.skip(rehearsal.Skipped{Source: src, Reason: SkipUnreadable, Message: fmt.Sprintf("manifest document %d: %v", n, err)})
		return
	}
	if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return // only comments: a template that rendered nothing
	}
	obj, err := rehearsal.Decode(node.Content[0])
	if err != nil {
		m.skip(rehearsal.Skipped{Source: src, Reason: SkipUnreadable, Message: fmt.Sprintf("manifest document %d: %v", n, err)})
		return
	}
	m.placeIn(obj, namespace)
	skip := rehearsal.Skipped{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Source: src}
	out := rehearsal.Object{Obj: obj, Source: src, FieldManager: HelmFieldManager}
	if !servedBy(m.opts.KB, obj.GetAPIVersion(), obj.GetKind(), m.opts.Target) {
		if out.Obj, err = convertNode(m.opts.KB, node.Content[0], m.opts.Target); err != nil {
			skip.Reason, skip.Message = SkipNoConversion, err.Error()
			m.skip(skip)
			return
		}
		out.OriginalAPIVersion = obj.GetAPIVersion()
	}
	m.placeIn(out.Obj, namespace)
	rehearsal.Strip(out.Obj, false)
	raw, err := out.Obj.MarshalJSON()
	if err != nil || !m.budget.take(len(raw)) {
		skip.Reason, skip.Message = SkipBound, fmt.Sprintf("the rehearsal's bound of %d objects or %d MiB of objects was reached", m.opts.MaxObjects, m.opts.MaxBytes>>20)
		m.skip(skip)
		return
	}
	m.objects = append(m.objects, out)
}

// placeIn puts a namespaced object without a namespace in the release's, as Helm does; a kind
// the cluster does not serve (removed, or its CRD missing) is taken as namespaced.
func (m *manifestReader) placeIn(obj *unstructured.Unstructured, namespace string) {
	if ns, ok := m.namespaced[obj.GroupVersionKind().Group+"/"+obj.GetKind()]; obj.GetNamespace() == "" && (ns || !ok) {
		obj.SetNamespace(namespace)
	}
}

// mergeReleases replays an object both listed live and in a release's manifest once: the
// manifest's when it was converted (its apiVersion is what the next `helm upgrade` sends and
// the target does not serve), else the live one. Manifest objects not found live stay: the
// next upgrade makes them.
func mergeReleases(live, releases []rehearsal.Object) []rehearsal.Object {
	fromRelease := map[string]bool{}
	var kept []rehearsal.Object
	liveKeys := map[string]bool{}
	for _, o := range live {
		liveKeys[objectKey(o.Obj)] = true
	}
	for _, o := range releases {
		k := objectKey(o.Obj)
		if o.OriginalAPIVersion != "" || !liveKeys[k] {
			fromRelease[k] = true
			kept = append(kept, o)
		}
	}
	out := make([]rehearsal.Object, 0, len(live)+len(kept))
	for _, o := range live {
		if !fromRelease[objectKey(o.Obj)] {
			out = append(out, o)
		}
	}
	return append(out, kept...)
}

// objectKey names an object by group, kind, namespace and name: the same object whatever
// the version it is read at.
func objectKey(o *unstructured.Unstructured) string {
	return o.GroupVersionKind().Group + "/" + o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}
