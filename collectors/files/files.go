// Package files collects API usage from rendered manifests: YAML and JSON files under a
// directory, decoded as `kubectl apply -f` would, with the file and line of each object.
package files

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
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
	// Watched holds "apiVersion/Kind" keys ("extensions/v1beta1/Ingress", "v1/Endpoints") of
	// the kinds whose objects are listed; other objects are only counted.
	Watched map[string]bool
	// Workers decode files in parallel; 0 means one per CPU.
	Workers int
}

// Warning is a document that could not be read, with where it is.
type Warning struct {
	File    string
	Line    int
	Message string
	// Partial is true when the document might have held an object the verdict needs.
	Partial bool
}

func (w Warning) String() string { return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Message) }

// Result is what a walk saw.
type Result struct {
	Base      string
	APIUsage  []inventory.APIUsage
	Warnings  []Warning
	Files     int
	Documents int
	Objects   int
}

// Collect walks root (a directory or one file) in lexical order.
func Collect(root string, opts Options) (*Result, error) {
	paths, base, err := listFiles(root)
	if err != nil {
		return nil, err
	}
	agg := newAggregator()
	res := &Result{Base: base, Files: len(paths)}
	decodeAll(paths, base, opts, func(fr fileResult) {
		res.Documents += fr.documents
		res.Objects += fr.objects
		res.Warnings = append(res.Warnings, fr.warnings...)
		for _, o := range fr.observed {
			agg.add(o)
		}
	})
	res.APIUsage = agg.usage()
	return res, nil
}

func listFiles(root string) (paths []string, base string, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, "", fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() {
		return []string{root}, filepath.Dir(root), nil
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", path, err)
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && manifestExt(d.Name()) {
			paths = append(paths, path)
		}
		return nil
	})
	return paths, root, err
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
func decodeAll(paths []string, base string, opts Options, merge func(fileResult)) {
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
				done <- indexed{i, decodeFile(paths[i], relPath(base, paths[i]), opts.Watched)}
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

// Inventory turns a walk into the document: api-usage is the only capability files can
// assess; the rest say why they are absent.
func Inventory(res *Result, collectedAt time.Time) *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion,
		Source:        inventory.SourceFiles,
		ClusterID:     "files",
		CollectedAt:   collectedAt.UTC().Truncate(time.Second),
		FilesBase:     filepath.ToSlash(res.Base),
		APIUsage:      res.APIUsage,
		Capabilities:  map[string]inventory.Capability{inventory.CapAPIUsage: apiUsageCapability(res)},
	}
	for _, c := range []string{inventory.CapVersions, inventory.CapHelm, inventory.CapDeprecatedCalls, inventory.CapAddons, inventory.CapCRDs} {
		doc.Capabilities[c] = inventory.Capability{Available: false, Reason: "files mode"}
	}
	if doc.APIUsage == nil {
		doc.APIUsage = []inventory.APIUsage{}
	}
	return doc
}

func apiUsageCapability(res *Result) inventory.Capability {
	var skipped []string
	for _, w := range res.Warnings {
		if w.Partial {
			skipped = append(skipped, fmt.Sprintf("%s:%d", w.File, w.Line))
		}
	}
	if len(skipped) == 0 {
		return inventory.Capability{Available: true}
	}
	sort.Strings(skipped)
	return inventory.Capability{
		Available: true,
		Partial:   true,
		Reason:    fmt.Sprintf("%d document(s) could not be decoded", len(skipped)),
		Skipped:   skipped,
	}
}
