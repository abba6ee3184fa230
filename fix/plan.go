// Package fix turns manifests at APIs the target does not serve into the versions that replace
// them (upgradescope fix): it reads the files as kubectl does, converts each such object with
// package convert, and rewrites only the converted objects' lines, or lists what needs a person.
package fix

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// Options say what to fix and against which target.
type Options struct {
	KB *kb.KB
	// Target is the minor the objects must be served by ("1.37").
	Target string
	// MaxBytes bounds the bytes read in all (0: the files collector's default).
	MaxBytes int64
	// SkipServed leaves documents whose apiVersion and kind, read from their top-level lines,
	// name an API the target serves unparsed (Object nil): fix needs only the others, and
	// parsing is most of its time. Rehearsal, which replays every object, leaves it false.
	SkipServed bool
	// KeepObjects keeps every file's bytes and every document's parsed object and conversion
	// (Doc.Object, Outcome.Object) in the Plan, as rehearsal replays them. Without it the Plan
	// holds what its outputs need: a file's bytes only when it changes, only the documents the
	// report names, and no parsed nodes, each dropped as soon as its file is converted, so
	// that fix's memory follows what it changes rather than what it reads.
	KeepObjects bool
	// Retain says what a changed file keeps of its bytes once it is converted: all of them
	// (the zero value), or only what one output reads, computed on the worker that converted
	// it, so that the plan holds a changed file's diff or new bytes rather than both versions.
	Retain Retain
	// Workers read files in parallel; 0 means one per CPU.
	Workers int
	// Exclude leaves out the paths it matches, as scan --files leaves them out.
	Exclude *files.Exclude
}

// Retain is what a changed file keeps of its bytes: what the output the plan is made for reads.
type Retain int

const (
	// RetainAll keeps Before and After, from which every output is made.
	RetainAll Retain = iota
	// RetainDiff keeps the file's unified diff alone, for WriteDiff.
	RetainDiff
	// RetainWrite keeps After and a SHA-256 digest of Before, for Write, which compares the
	// file on disk with the digest before it replaces it.
	RetainWrite
	// RetainNone keeps none of the bytes, for a plan whose output names the changed files
	// only (Report).
	RetainNone
)

// Plan is what fixing a directory would do: every file read, with its documents.
type Plan struct {
	// Root is the path given; File paths are relative to it (or its base name for a file).
	Root  string
	Files []File
	// Target is Options.Target.
	Target string
	// Warnings name the paths the walk did not read (a symlinked directory, a named pipe, a
	// file past the byte budget), as scan --files names them.
	Warnings []files.Warning
	// Excluded are the paths an exclusion pattern left unread (Options.Exclude), listed as
	// scan lists them; ExcludedOmitted counts those past their bound.
	Excluded        []inventory.ExcludedPath
	ExcludedOmitted int
}

// File is one file read.
type File struct {
	Path string
	// Before is the file as read; After what it becomes, nil when nothing in it changes.
	// Without Options.KeepObjects, Before is nil too when nothing changes. For a file that
	// changes, Options.Retain says which of them the plan keeps.
	Before, After []byte
	// Docs are its documents; without Options.KeepObjects, only those the target does not
	// serve or that need a person.
	Docs []Doc
	// Abs is where the file is on disk, and Mode its permissions, kept when it is written.
	Abs  string
	Mode fs.FileMode

	// pieces are the documents as read, until they are converted into Docs.
	pieces []piece
	// changed says the fix rewrites the file, whatever of its bytes are kept; diff is its
	// unified diff (RetainDiff), and beforeSum the digest of Before (RetainWrite).
	changed   bool
	diff      []byte
	beforeSum *[sha256.Size]byte
}

// Doc is one document of a file, in order.
type Doc struct {
	// Line is the document's first line in the file (1-based).
	Line int
	// Object is the document as parsed (nil for a template, a comment-only or invalid
	// document); Outcome what convert did with it (zero when its API is served).
	Object  *yaml.Node
	Outcome convert.Outcome
	// Skip says why the document was not converted although its API is not served (a Helm
	// template, an object produced by Argo CD or Flux, invalid YAML); "" otherwise.
	Skip string

	// Start and End are the document's bytes in File.Before. The items of a v1 List are a
	// Doc each, sharing their List's range; Item is their index plus one (0: no List item).
	Start, End int
	Item       int
	// Ref names the object: read from its nodes, or from its lines for a template.
	Ref Ref
	// Notes are about the document rather than the conversion: the chart template it was
	// rendered from, the GitOps source that produces it. Lines are the file's.
	Notes []convert.Remark
	// Source names the Argo CD Application or Flux object producing it ("" for none).
	Source string

	src source
	// docNode is the parsed document around Object, whose comments a re-encoding keeps.
	docNode *yaml.Node
	// objectLine and converts are ObjectLine and Converts, kept when the nodes are dropped.
	objectLine int
	converts   bool
}

// Ref is an object's identity as a person reads it.
type Ref struct {
	APIVersion, Kind, Namespace, Name string
}

// ObjectLine is the line of the object's first field (where scan names it), else Line.
func (d *Doc) ObjectLine() int {
	switch {
	case d.Object != nil && d.Object.Line > 0:
		return d.Object.Line
	case d.objectLine > 0:
		return d.objectLine
	}
	return d.Line
}

// Converts says whether the document is rewritten.
func (d *Doc) Converts() bool { return d.Skip == "" && (d.Outcome.Object != nil || d.converts) }

// release drops what only converting the document needed (its nodes, its text), keeping what
// the plan's outputs read, and says whether they name it at all.
func (d *Doc) release() (named bool) {
	d.objectLine, d.converts = d.ObjectLine(), d.Converts()
	d.Object, d.docNode, d.Outcome.Object, d.src = nil, nil, nil, source{}
	return d.Outcome.From != d.Outcome.To || d.NeedsPerson() || d.converts
}

// NeedsPerson says whether the document is listed for a person and left untouched.
func (d *Doc) NeedsPerson() bool { return d.Skip != "" || len(d.Outcome.Manual) > 0 }

// Scan reads root (a directory, walked, or one file) and plans the fix. It reads the files
// scan --files reads, splits YAML as kubectl's reader does, converts what the target does not
// serve and verifies every rewritten document reads back as the conversion. A document it
// cannot rewrite safely is listed for a person, never guessed at.
func Scan(root string, opts Options) (*Plan, error) {
	if opts.KB == nil {
		return nil, fmt.Errorf("fix: no knowledge base")
	}
	listing, err := files.List(root, opts.MaxBytes, opts.Exclude)
	if err != nil {
		return nil, err
	}
	paths, base := listing.Paths, listing.Base
	plan := &Plan{Root: root, Target: opts.Target, Warnings: listing.Skipped, Files: make([]File, len(paths)),
		Excluded: listing.Excluded, ExcludedOmitted: listing.ExcludedOmitted}
	errs := make([]error, len(paths))
	s := newScanner(opts)
	lean := opts.SkipServed && !opts.KeepObjects
	parallel(opts.Workers, len(paths), func(i int) {
		f, err := readFile(paths[i], files.RelPath(base, paths[i]))
		if err == nil && lean && s.inert(&f) {
			f.Before, f.pieces = nil, nil // nothing in it can change or need a person
		}
		plan.Files[i], errs[i] = f, err
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	s.index(plan.Files)
	parallel(opts.Workers, len(plan.Files), func(i int) { s.file(&plan.Files[i]) })
	return plan, nil
}

// readFile reads one listed file and splits it into documents.
func readFile(path, rel string) (File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", rel, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", rel, err)
	}
	f := File{Path: rel, Before: data, Abs: path, Mode: info.Mode().Perm()}
	if files.IsJSON(data) {
		f.pieces, err = splitJSON(data)
	} else {
		f.pieces, err = splitYAML(data)
	}
	if err != nil {
		return File{}, fmt.Errorf("%s:%w", rel, err)
	}
	return f, nil
}

// parallel calls fn for 0..n-1, workers at a time (0: one per CPU); each file is
// independent of the others once the index of CRDs and GitOps sources is built.
func parallel(workers, n int, fn func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error { fn(i); return nil })
	}
	_ = g.Wait() // fn returns no error
}
