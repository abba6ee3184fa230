// Package files collects API usage from rendered manifests: YAML and JSON files under a
// directory (Collect), in an fs.FS (CollectFS) or in one file held in memory (CollectBytes),
// decoded as `kubectl apply -f` would, with the file and line of each object.
package files

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/collectors/preflight"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Bounds on hostile input. A document past MaxDocumentBytes is refused, not parsed.
const (
	MaxDocumentBytes = 16 << 20
	readBufferBytes  = 64 << 10
)

// skipDirs are never walked: VCS metadata and vendored dependencies hold no manifests of ours.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true}

// Options says what to record.
type Options struct {
	// Observe is what to record: the kinds whose objects are listed, the images observed
	// closely, the probes run. The engine supplies it (Engine.Observe).
	kb.Observe
	// TeamLabel is the Namespace label whose value names the team.
	TeamLabel string
	// Workers decode files in parallel; 0 means one per CPU.
	Workers int

	// MaxBytes is how many bytes of manifests a walk reads in all; files past it are not read
	// and reported. 0 means DefaultMaxBytes.
	MaxBytes int64
	// Deadline ends the walk: files it did not reach, and the rest of a file being read, are
	// not read and are reported. The zero time sets none.
	Deadline time.Time
	// Exclude names the paths a walk leaves out (--exclude, .upgradescopeignore): an excluded
	// directory is not walked, an excluded file not read, and each is listed in the Result.
	Exclude *Exclude
	// Confine is a directory (absolute, symlinks resolved) no symlink may lead out of: a
	// symlinked file whose target lies outside is not read, and is named. "" confines nothing.
	Confine string

	// observer is the walk's probe observation: each file's is a Fork of it, so the bounds on
	// probe work hold for the walk, not for each file.
	observer *probe.Observer
	// drops is narrowing(Probes), computed once per walk, and dropsArgs the same keeping
	// containers' command and args (keepingArgs).
	drops, dropsArgs map[string]map[string]bool
	// noPreflight reads nothing for the pre-flight section (a Helm release's stored
	// manifest, which the live collector reads for its APIs only).
	noPreflight bool
	// listAll lists the API of every object, custom and unjudged ones too (ManifestAPIs).
	listAll bool
}

// preflight says whether the pre-flight Recorder reads objects of this API.
func (o Options) preflight(apiVersion, kind string) bool {
	return !o.noPreflight && preflight.Reads(apiVersion, kind)
}

// DefaultMaxBytes is the manifests a walk reads by default: twice the largest corpus
// measured (500,000 objects with their images, 881 MiB, read in about 12 s here), so a
// repository of short lines cannot keep a CI job reading for minutes.
const DefaultMaxBytes = 2 << 30

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// pastDeadline says whether the walk's deadline has passed.
func (o Options) pastDeadline() bool {
	return !o.Deadline.IsZero() && time.Now().After(o.Deadline)
}

// Warning is a document that could not be read, with where it is.
type Warning struct {
	File    string
	Line    int
	Message string
	// Partial is true when the document might have held an object the verdict needs.
	Partial bool
	// Bound is true when the document was refused for its size (bytes or YAML nodes).
	Bound bool
}

func (w Warning) String() string { return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Message) }

// Result is what a walk saw.
type Result struct {
	Base           string
	APIUsage       []inventory.APIUsage
	WorkloadImages []inventory.WorkloadImage
	// ImagesOmitted counts containers whose image is not listed (inventory.MaxListedImages).
	ImagesOmitted  int
	IngressClasses []inventory.IngressClass
	Namespaces     []inventory.Namespace
	CRDs           []inventory.CRD
	// GitOps are the Argo CD Applications, Flux HelmReleases and OCIRepositories seen.
	GitOps []*unstructured.Unstructured
	// Probes are the observations of Options.Probes, in id order.
	Probes []inventory.Probe
	// Orphans are the usage rows of custom resources whose CRD is not among the files.
	Orphans []inventory.APIUsage
	// Preflight is what the pre-flight rules read of the files (collectors/preflight); nil
	// when no object of a kind it reads was found.
	Preflight *inventory.Preflight
	Warnings  []Warning
	// Excluded are the paths Options.Exclude left out, in walk order; ExcludedOmitted counts
	// those past inventory.MaxExcludedPaths.
	Excluded        []inventory.ExcludedPath
	ExcludedOmitted int
	Files           int
	Documents       int
	Objects         int
}

// Collect walks root (a directory or one file) in lexical order.
func Collect(root string, opts Options) (*Result, error) {
	l, err := listFiles(root, opts.Exclude, opts.Confine)
	if err != nil {
		return nil, err
	}
	return collectFrom(osFiles{}, l, opts), nil
}

// CollectFS walks fsys from its root in lexical order, as Collect walks a directory: the same
// files are read, with the same decoder and bounds, and named by their path in fsys. The
// Result's Base is empty. fsys must not block an open (an in-memory tree, an archive): a
// directory on disk goes through Collect, which guards against a named pipe swapped in.
func CollectFS(fsys fs.FS, opts Options) (*Result, error) {
	l := lister{root: "", stat: func(p string) (fs.FileInfo, error) { return fs.Stat(fsys, p) }, exclude: opts.Exclude}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", path, err)
		}
		return l.visit(path, d, path == ".")
	})
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	return collectFrom(fsFiles{fsys}, &l, opts), nil
}

// source is where a walk's files are: the OS or an fs.FS. Both walks share everything else.
type source interface {
	stat(path string) (fs.FileInfo, error)
	decode(path, rel string, opts Options) fileResult
}

type osFiles struct{}

func (osFiles) stat(path string) (fs.FileInfo, error) { return os.Stat(path) }
func (osFiles) decode(path, rel string, opts Options) fileResult {
	return decodeFile(path, rel, opts)
}

type fsFiles struct{ fsys fs.FS }

func (s fsFiles) stat(path string) (fs.FileInfo, error) { return fs.Stat(s.fsys, path) }
func (s fsFiles) decode(path, rel string, opts Options) fileResult {
	f, err := s.fsys.Open(path)
	return decodeOpened(f, err, rel, opts)
}

// collectFrom reads the listed files within the walk's bounds and merges what they hold.
func collectFrom(src source, l *lister, opts Options) *Result {
	base := l.root
	paths, skipped := withinBudget(src, l.paths, base, opts.maxBytes(), l.skipped)
	opts.drops = narrowing(opts.Probes)
	opts.dropsArgs = keepingArgs(opts.drops)
	agg, custom, images := newAggregator(), newAggregator(), inventory.NewImageSet(opts.Images)
	probes := opts.Probes.NewObserver()
	opts.observer = probes
	pre := preflight.NewRecorder(preflight.FromManifests())
	crds := map[string]bool{}
	res := &Result{Base: base, Files: len(paths), Warnings: skipped,
		Excluded: l.excluded.paths, ExcludedOmitted: l.excluded.omitted}
	late := 0
	decodeAll(src, paths, base, opts, func(fr fileResult) {
		if fr.late {
			late++
			return
		}
		res.Documents += fr.documents
		res.Objects += fr.objects
		res.Warnings = append(res.Warnings, fr.warnings...)
		agg.merge(fr.observed)
		custom.merge(fr.custom)
		probes.Merge(fr.probes)
		if fr.preflight != nil {
			pre.Merge(fr.preflight)
		}
		for _, im := range fr.images {
			images.Add(im.image, im.ref.Namespace, im.labels, &im.ref)
		}
		res.IngressClasses = append(res.IngressClasses, fr.ingressClasses...)
		res.Namespaces = append(res.Namespaces, fr.namespaces...)
		for _, c := range fr.crds {
			// A repository renders the same CRD for every environment: one entry per definition.
			if key, err := json.Marshal(c); err != nil || !crds[string(key)] {
				crds[string(key)] = true
				res.CRDs = append(res.CRDs, c)
			}
		}
		res.GitOps = append(res.GitOps, fr.gitops...)
	})
	if late > 0 {
		res.Warnings = append(res.Warnings, Warning{
			File: relPath(base, paths[len(paths)-late]), Message: fmt.Sprintf("%d file(s) not read: the walk ran past its time limit (--timeout)", late),
			Partial: true, Bound: true,
		})
	}
	res.APIUsage = agg.usage()
	res.WorkloadImages, res.ImagesOmitted = images.List(), images.Omitted()
	res.Orphans = attachUsage(res.CRDs, custom.usage())
	res.Probes = probes.Probes()
	if p := pre.Section(); !reflect.ValueOf(*p).IsZero() {
		res.Preflight = p
	}
	return res
}

// listFiles walks root for manifests. A symlinked file is read like any other; a symlinked
// directory is not walked (it may loop or leave the tree) and is reported as a partial
// warning, so what it holds is never silently missing from the verdict. A root that is itself
// a symlink to a directory is walked.
//
// ex leaves out what it matches, below the root: a root given as one file is read.
func listFiles(root string, ex *Exclude, confine string) (*lister, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read manifests: %s is not a regular file or a directory", root)
	}
	if !info.IsDir() {
		return &lister{root: filepath.Dir(root), paths: []string{root}}, nil
	}
	walkRoot := root
	if l, err := os.Lstat(root); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		walkRoot = root + string(filepath.Separator) // WalkDir follows a root given as "link/"
	}
	l := &lister{root: root, stat: os.Stat, exclude: ex, confine: confine}
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", path, err)
		}
		return l.visit(path, d, path == walkRoot)
	})
	return l, err
}

// lister keeps what a walk reads and names what it does not; the OS walk and the fs.FS walk
// share it, so both read the same files.
type lister struct {
	root     string // what skipped paths are named relative to
	stat     func(path string) (fs.FileInfo, error)
	exclude  *Exclude
	confine  string // Options.Confine; the OS walk only
	paths    []string
	skipped  []Warning
	excluded excludedList
}

// visit is the walk's step at path; top is the walk's root. Exclusion comes first, so an
// excluded directory is not walked and an excluded file is neither read nor warned about.
func (l *lister) visit(path string, d fs.DirEntry, top bool) error {
	if !top && l.excludes(path, d) {
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	switch {
	case d.IsDir():
		if !top && skipDirs[d.Name()] {
			return fs.SkipDir
		}
	case d.Type()&fs.ModeSymlink != 0:
		target, err := l.stat(path)
		switch {
		case err == nil && l.leaves(path):
			l.skip(path, "symlink out of "+l.confine+": not read")
		case err == nil && target.IsDir():
			l.skip(path, "symlinked directory not walked")
		case err == nil && target.Mode().IsRegular() && manifestExt(d.Name()):
			l.paths = append(l.paths, path)
		case err == nil && manifestExt(d.Name()):
			l.skip(path, "symlink to "+smallfile.Kind(target.Mode())+": not read")
		case err != nil && manifestExt(d.Name()):
			l.skip(path, "symlink to nothing readable")
		}
	case d.Type().IsRegular() && manifestExt(d.Name()):
		l.paths = append(l.paths, path)
	case manifestExt(d.Name()):
		// A FIFO or a device could block or never end: named as not read, never opened.
		l.skip(path, smallfile.Kind(d.Type())+": not read")
	}
	return nil
}

// leaves reports whether the symlink at path resolves outside l.confine.
func (l *lister) leaves(path string) bool {
	if l.confine == "" {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	prefix := strings.TrimSuffix(l.confine, string(filepath.Separator)) + string(filepath.Separator)
	return real != l.confine && !strings.HasPrefix(real, prefix)
}

// excludes says whether an exclusion pattern leaves path out, and lists it when the walk
// would otherwise have walked, read or warned about it: a directory the walk enters, a
// symlink, a manifest file. A symlink is matched as a file: "dir/" does not match one.
func (l *lister) excludes(path string, d fs.DirEntry) bool {
	if l.exclude == nil {
		return false
	}
	rel := relPath(l.root, path)
	p, ok := l.exclude.Match(rel, d.IsDir())
	noticed := d.IsDir() && !skipDirs[d.Name()] || d.Type()&fs.ModeSymlink != 0 || !d.IsDir() && manifestExt(d.Name())
	if ok && noticed {
		l.excluded.add(rel, p)
	}
	return ok
}

func (l *lister) skip(path, msg string) {
	l.skipped = append(l.skipped, skipWarning(l.root, path, msg))
}

// withinBudget keeps the files, in walk order, whose sizes add up to at most max bytes, and
// reports the rest as not read, naming the first of them and the flag that raises the budget.
func withinBudget(src source, paths []string, base string, max int64, warnings []Warning) ([]string, []Warning) {
	var total int64
	for i, p := range paths {
		info, err := src.stat(p)
		if err != nil {
			continue // decodeFile reports it
		}
		if total += info.Size(); total > max {
			return paths[:i], append(warnings, Warning{
				File:    relPath(base, p),
				Message: fmt.Sprintf("%d file(s) from here on not read: past the %d MiB of manifests a walk reads (--files-max-mib)", len(paths)-i, max>>20),
				Partial: true, Bound: true,
			})
		}
	}
	return paths, warnings
}

func skipWarning(root, path, msg string) Warning {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = path
	}
	return Warning{File: filepath.ToSlash(rel), Line: 0, Message: msg, Partial: true}
}

func manifestExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

type indexed struct {
	i  int
	fr fileResult
}

// decodeAll decodes files in parallel and hands each result to merge in file order, so the
// inventory does not depend on scheduling and a result is dropped as soon as it is merged.
func decodeAll(src source, paths []string, base string, opts Options, merge func(fileResult)) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	done := make(chan indexed, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if opts.pastDeadline() {
					done <- indexed{i, fileResult{late: true}}
					continue
				}
				done <- indexed{i, src.decode(paths[i], relPath(base, paths[i]), opts)}
			}
		}()
	}
	go func() {
		for i := range paths {
			next <- i
		}
		close(next)
		wg.Wait()
		close(done)
	}()
	pending := map[int]fileResult{}
	want := 0
	for r := range done {
		pending[r.i] = r.fr
		for fr, ok := pending[want]; ok; fr, ok = pending[want] {
			delete(pending, want)
			merge(fr)
			want++
		}
	}
}

func relPath(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// Inventory turns a walk into the document: the API usage, add-ons and CRDs the files hold
// and what the pre-flight rules read of them; versions, Helm releases, deprecated calls and
// the pre-flight parts only a cluster shows say why they are absent.
func Inventory(res *Result, collectedAt time.Time) *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion:         inventory.SchemaVersion,
		Source:                inventory.SourceFiles,
		ClusterID:             "files",
		CollectedAt:           collectedAt.UTC().Truncate(time.Second),
		FilesBase:             filepath.ToSlash(res.Base),
		FilesExcluded:         res.Excluded,
		FilesExcludedOmitted:  res.ExcludedOmitted,
		APIUsage:              res.APIUsage,
		WorkloadImages:        res.WorkloadImages,
		WorkloadImagesOmitted: res.ImagesOmitted,
		IngressClasses:        res.IngressClasses,
		Namespaces:            res.Namespaces,
		CRDs:                  res.CRDs,
		OrphanUsage:           res.Orphans,
		Probes:                res.Probes,
		Preflight:             res.Preflight,
		Capabilities: map[string]inventory.Capability{
			inventory.CapAPIUsage: apiUsageCapability(res),
			inventory.CapAddons:   {Available: true},
			inventory.CapCRDs:     crdCapability(res.Orphans),
		},
	}
	for _, c := range []string{inventory.CapVersions, inventory.CapHelm, inventory.CapDeprecatedCalls} {
		doc.Capabilities[c] = inventory.Capability{Available: false, Reason: "files mode"}
	}
	preflightCapabilities(doc)
	if doc.APIUsage == nil {
		doc.APIUsage = []inventory.APIUsage{}
	}
	if len(res.GitOps) > 0 {
		gitops.Apply(doc, gitops.FromManifests(res.GitOps))
	}
	bound(doc)
	return doc
}

// preflightCapabilities says which pre-flight parts files assess. The files were read, so
// the parts manifests show are available even when they hold no such object (a repository
// without a PodDisruptionBudget has none to judge); a list cut at its bound makes its part
// partial. What only a running cluster shows is not available, an optional gap in files mode.
func preflightCapabilities(doc *inventory.Document) {
	for _, c := range []string{inventory.CapDisruptionBudgets, inventory.CapPods, inventory.CapWebhooks,
		inventory.CapComponentFlags, inventory.CapKubeletConfig} {
		doc.Capabilities[c] = inventory.Capability{Available: true}
	}
	for c, shows := range map[string]string{
		inventory.CapEndpoints:   "ready endpoints",
		inventory.CapAPIServices: "APIService availability",
		inventory.CapNodeState:   "nodes",
	} {
		doc.Capabilities[c] = inventory.Capability{Available: false, Reason: "live only: manifests show no " + shows}
	}
	p := doc.Preflight
	if p == nil {
		return
	}
	for _, cut := range []struct {
		capability string
		omitted    int
		what       string
	}{
		{inventory.CapDisruptionBudgets, p.DisruptionBudgetsOmitted, "PodDisruptionBudget(s)"},
		{inventory.CapPods, p.PlacementsOmitted, "placement(s)"},
		{inventory.CapWebhooks, p.WebhooksOmitted, "webhook(s)"},
		{inventory.CapAPIServices, p.APIServicesOmitted, "APIService(s)"},
		{inventory.CapCRDs, p.ConversionsOmitted, "CRD conversion webhook(s)"},
		{inventory.CapComponentFlags, p.ComponentsOmitted, "component configuration(s)"},
	} {
		if cut.omitted > 0 {
			partial(doc, cut.capability, fmt.Sprintf("%d %s past the %d an inventory lists", cut.omitted, cut.what, inventory.MaxPreflightItems))
		}
	}
}

// bound keeps the lists a hostile repository can grow within the document's bounds, so
// eval accepts every inventory this collector writes. What a cut list leaves out makes its
// capability partial: a cut api-usage row list makes the verdict unknown; cut CRDs or ingress
// classes are not assessed. Namespaces past the bound only lose their team.
func bound(doc *inventory.Document) {
	if n := len(doc.APIUsage); n > inventory.MaxAPIUsage {
		doc.APIUsage = doc.APIUsage[:inventory.MaxAPIUsage]
		partial(doc, inventory.CapAPIUsage, fmt.Sprintf("%d kind(s) past the %d rows an inventory lists", n-inventory.MaxAPIUsage, inventory.MaxAPIUsage))
	}
	if len(doc.OrphanUsage) > inventory.MaxAPIUsage {
		doc.OrphanUsage = doc.OrphanUsage[:inventory.MaxAPIUsage] // the crds gap names them all
	}
	if n := len(doc.CRDs); n > inventory.MaxListItems {
		doc.CRDs = doc.CRDs[:inventory.MaxListItems]
		partial(doc, inventory.CapCRDs, fmt.Sprintf("%d CustomResourceDefinition(s) past the %d an inventory lists", n-inventory.MaxListItems, inventory.MaxListItems))
	}
	if n := len(doc.IngressClasses); n > inventory.MaxListItems {
		doc.IngressClasses = doc.IngressClasses[:inventory.MaxListItems]
		partial(doc, inventory.CapAddons, fmt.Sprintf("%d IngressClass(es) past the %d an inventory lists", n-inventory.MaxListItems, inventory.MaxListItems))
	}
	if len(doc.Namespaces) > inventory.MaxNamespaces {
		doc.Namespaces = doc.Namespaces[:inventory.MaxNamespaces]
	}
	for name, c := range doc.Capabilities {
		c.Skipped = inventory.CapSkipped(c.Skipped)
		doc.Capabilities[name] = c
	}
	for _, cut := range evidenceCuts {
		if values(doc) <= inventory.MaxValues {
			return
		}
		cut(doc)
	}
}

// evidenceCuts drop evidence lists, least needed first, while a document of lists each
// within its bound is past MaxValues in all: only a hostile repository gets there. The
// api-usage rows the verdict needs go last, and only their per-namespace detail.
var evidenceCuts = []func(*inventory.Document){
	func(doc *inventory.Document) { doc.OrphanUsage = nil }, // the crds gap still names them
	func(doc *inventory.Document) { doc.Namespaces = nil },  // their findings lose their team
	func(doc *inventory.Document) {
		doc.IngressClasses, doc.WorkloadImagesOmitted = nil, doc.WorkloadImagesOmitted+len(doc.WorkloadImages)
		doc.WorkloadImages = nil
		partial(doc, inventory.CapAddons, "ingress classes and images not listed: the inventory is past its value bound")
	},
	func(doc *inventory.Document) {
		if doc.Preflight == nil {
			return
		}
		doc.Preflight = nil
		for _, c := range []string{inventory.CapDisruptionBudgets, inventory.CapPods, inventory.CapWebhooks, inventory.CapComponentFlags, inventory.CapKubeletConfig} {
			partial(doc, c, "pre-flight observations not listed: the inventory is past its value bound")
		}
	},
	func(doc *inventory.Document) {
		doc.CRDs = nil
		partial(doc, inventory.CapCRDs, "CustomResourceDefinitions not listed: the inventory is past its value bound")
	},
	func(doc *inventory.Document) {
		for i := range doc.APIUsage {
			doc.APIUsage[i].KeepNamespaces(10)
		}
	},
}

// values counts the JSON values of doc as the schema's bound counts them.
func values(doc *inventory.Document) int {
	data, err := json.Marshal(doc)
	if err != nil {
		return 0
	}
	return inventory.CountValues(data)
}

// partial marks a capability partial for reason, keeping the reason it had.
func partial(doc *inventory.Document, name, reason string) {
	c := doc.Capabilities[name]
	c.Partial = true
	c.Reason = strings.TrimPrefix(c.Reason+"; "+reason, "; ")
	doc.Capabilities[name] = c
}

func apiUsageCapability(res *Result) inventory.Capability {
	var skipped []string
	paths := 0
	for _, w := range res.Warnings {
		if w.Partial {
			skipped = append(skipped, fmt.Sprintf("%s:%d", w.File, w.Line))
		}
		if w.Partial && w.Line == 0 {
			paths++ // a path not walked or read: a symlink, a named pipe, one past the budget
		}
	}
	if len(skipped) == 0 {
		return inventory.Capability{Available: true}
	}
	sort.Strings(skipped)
	return inventory.Capability{
		Available: true,
		Partial:   true,
		Reason:    skippedReason(len(skipped)-paths, paths),
		Skipped:   skipped,
	}
}

func skippedReason(docs, paths int) string {
	switch {
	case paths == 0:
		return fmt.Sprintf("%d document(s) could not be decoded", docs)
	case docs == 0:
		return fmt.Sprintf("%d path(s) not read", paths)
	}
	return fmt.Sprintf("%d document(s) could not be decoded, %d path(s) not read", docs, paths)
}

func crdCapability(orphans []inventory.APIUsage) inventory.Capability {
	if len(orphans) == 0 {
		return inventory.Capability{Available: true}
	}
	var skipped []string
	for _, u := range orphans {
		skipped = append(skipped, u.Group+"/"+u.Version+" "+u.Kind)
	}
	return inventory.Capability{
		Available: true, Partial: true, Skipped: skipped,
		Reason: fmt.Sprintf("%d custom resource kind(s) %s", len(orphans), inventory.OrphanReason),
	}
}

// Manifest decodes one rendered manifest held in memory (a Helm release's stored manifest)
// as a file named name, and returns its API usage with lines and helm # Source comments,
// and the documents it could not read: those marked Partial might have held an API the
// usage does not show.
func Manifest(name string, data []byte, opts Options) ([]inventory.APIUsage, []Warning) {
	opts.noPreflight = true
	d := newFileDecoder(name, opts)
	d.decodeYAMLStream(bufio.NewReaderSize(bytes.NewReader(data), readBufferBytes))
	return d.res.observed.usage(), d.res.warnings
}

// ManifestAPIs decodes one rendered manifest held in memory as Manifest does, but lists the
// API of every object, not only those the knowledge base judges: a chart's rendering, whose
// whole API list the chart advisor compares between chart versions.
func ManifestAPIs(name string, data []byte) ([]inventory.APIUsage, []Warning) {
	return Manifest(name, data, Options{listAll: true})
}
