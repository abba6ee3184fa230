package fix

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/inventory"
)

// Item is one line of what a plan lists: a document for a person, or a note.
type Item struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Kind    string `json:"kind,omitempty"`
	Object  string `json:"object,omitempty"`
	From    string `json:"apiVersion,omitempty"`
	Message string `json:"message"`
}

func (it Item) String() string {
	if it.Kind == "" {
		return fmt.Sprintf("%s:%d: %s", it.File, it.Line, it.Message)
	}
	return fmt.Sprintf("%s:%d: %s %s (%s): %s", it.File, it.Line, it.Kind, it.Object, it.From, it.Message)
}

// Changed are the files the fix rewrites.
func (p *Plan) Changed() []*File {
	var out []*File
	for i := range p.Files {
		if p.Files[i].changed {
			out = append(out, &p.Files[i])
		}
	}
	return out
}

// Manual lists what needs a person, each at its file and line, in file order.
func (p *Plan) Manual() []Item {
	var out []Item
	for _, f := range p.Files {
		for _, d := range f.Docs {
			if !d.NeedsPerson() {
				continue
			}
			it := Item{File: f.Path, Line: d.ObjectLine(), Kind: d.Ref.Kind, Object: objectName(d.Ref), From: d.Ref.APIVersion}
			if d.Skip != "" {
				it.Message = d.Skip
				out = append(out, it)
				continue
			}
			for _, r := range d.Outcome.Manual {
				it.Line, it.Message = lineOr(r.Line, d.ObjectLine()), r.Message
				out = append(out, it)
			}
		}
	}
	return out
}

// Notes lists what a reader of the rewritten files must know: defaults written out, fields
// moved, the chart template a document was rendered from.
func (p *Plan) Notes() []Item {
	var out []Item
	for _, f := range p.Files {
		for _, d := range f.Docs {
			if !d.Converts() {
				continue
			}
			notes := append(append([]convert.Remark(nil), d.Notes...), d.Outcome.Notes...)
			at := len(out)
			for _, r := range notes {
				out = append(out, Item{File: f.Path, Line: lineOr(r.Line, d.ObjectLine()), Message: r.Message})
			}
			mine := out[at:]
			sort.SliceStable(mine, func(i, j int) bool { return mine[i].Line < mine[j].Line })
		}
	}
	return out
}

func lineOr(line, fallback int) int {
	if line > 0 {
		return line
	}
	return fallback
}

func objectName(r Ref) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// ErrNotRetained says the plan was made without the bytes an output needs (Options.Retain).
var ErrNotRetained = errors.New("the plan did not keep the bytes this output needs (see fix.Options.Retain)")

// WriteDiff writes a unified diff of every changed file (3 lines of context, a/ and b/
// paths as git writes them). The plan must be made with RetainAll or RetainDiff.
func (p *Plan) WriteDiff(w io.Writer) error {
	for _, f := range p.Changed() {
		diff, err := f.unifiedDiff()
		if err == nil {
			_, err = w.Write(diff)
		}
		if err != nil {
			return fmt.Errorf("write the diff of %s: %w", f.Path, err)
		}
	}
	return nil
}

// unifiedDiff is the file's diff: kept (RetainDiff), or made from both versions (RetainAll).
func (f *File) unifiedDiff() ([]byte, error) {
	switch {
	case f.diff != nil:
		return f.diff, nil
	case f.Before != nil && f.After != nil:
		return unifiedDiff(f.Path, f.Before, f.After), nil
	}
	return nil, ErrNotRetained
}

// unifiedDiff is the one place a diff is made, as git writes it: 3 lines of context, a/ and
// b/ paths.
func unifiedDiff(path string, before, after []byte) []byte {
	var out bytes.Buffer
	diff := difflib.UnifiedDiff{
		A: difflib.SplitLines(string(before)), B: difflib.SplitLines(string(after)),
		FromFile: "a/" + path, ToFile: "b/" + path, Context: 3,
	}
	_ = difflib.WriteUnifiedDiff(&out, diff) // its only errors are the writer's; a Buffer's writes do not fail
	return out.Bytes()
}

// retain drops what mode does not keep of a changed file's bytes, once the file is patched.
func (f *File) retain(mode Retain) {
	if !f.changed {
		return
	}
	switch mode {
	case RetainDiff:
		f.diff = unifiedDiff(f.Path, f.Before, f.After)
		f.Before, f.After = nil, nil
	case RetainWrite:
		sum := sha256.Sum256(f.Before)
		f.beforeSum, f.Before = &sum, nil
	case RetainNone:
		f.Before, f.After = nil, nil
	}
}

// readAsBefore says whether data is the file as fix read it: its bytes, or their digest.
func (f *File) readAsBefore(data []byte) bool {
	if f.Before != nil {
		return bytes.Equal(data, f.Before)
	}
	return f.beforeSum != nil && sha256.Sum256(data) == *f.beforeSum
}

// Write writes every changed file in place: a temporary file in the same directory, with the
// file's permissions, renamed over it, so a reader never sees half a file. A file that is no
// longer as fix read it (an editor, another fix) is not written, since the plan was made
// from the old bytes; the others are, and the error names each file not written. The plan
// must be made with RetainAll or RetainWrite.
func (p *Plan) Write() error {
	var errs []error
	for _, f := range p.Changed() {
		if err := writeAtomic(f); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", f.Path, err))
		}
	}
	return errors.Join(errs...)
}

// ErrChangedSinceRead says a file changed between fix reading it and writing it.
var ErrChangedSinceRead = errors.New("the file changed since fix read it: not written; run fix again")

func writeAtomic(f *File) error {
	if f.After == nil || f.Before == nil && f.beforeSum == nil {
		return ErrNotRetained
	}
	path, after, mode := f.Abs, f.After, f.Mode
	// A symlinked file is written where it points, so the link stays a link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".fix-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(after); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Checked last, so that the window in which a change is lost is the rename's alone.
	now, err := os.ReadFile(path)
	switch {
	case err != nil:
		return err
	case bytes.Equal(now, after):
		return nil // another fix wrote the same conversion
	case !f.readAsBefore(now):
		return ErrChangedSinceRead
	}
	return os.Rename(tmp.Name(), path)
}

// Report is the plan as JSON (upgradescope fix -o json).
type Report struct {
	Target string `json:"target"`
	// Changed are the files the fix rewrites (or rewrote, with --write).
	Changed   []string    `json:"changed"`
	Documents []DocReport `json:"documents"`
	Manual    []Item      `json:"manual"`
	Notes     []Item      `json:"notes"`
	Warnings  []string    `json:"warnings,omitempty"`
	// Excluded are the paths an exclusion pattern left unread, as scan's report lists them.
	Excluded        []inventory.ExcludedPath `json:"excluded,omitempty"`
	ExcludedOmitted int                      `json:"excludedOmitted,omitempty"`
}

// DocReport is one document the target does not serve.
type DocReport struct {
	File      string           `json:"file"`
	Line      int              `json:"line"`
	Kind      string           `json:"kind"`
	Namespace string           `json:"namespace,omitempty"`
	Name      string           `json:"name,omitempty"`
	From      string           `json:"from"`
	To        string           `json:"to,omitempty"`
	Via       []string         `json:"via,omitempty"`
	Converted bool             `json:"converted"`
	Notes     []convert.Remark `json:"notes,omitempty"`
	Manual    []convert.Remark `json:"manual,omitempty"`
	Skip      string           `json:"skip,omitempty"`
	Source    string           `json:"source,omitempty"`
}

// Report summarises the plan: every document at an API the target does not serve.
func (p *Plan) Report() Report {
	r := Report{Target: p.Target, Changed: []string{}, Documents: []DocReport{}, Manual: p.Manual(), Notes: p.Notes(),
		Excluded: p.Excluded, ExcludedOmitted: p.ExcludedOmitted}
	for _, f := range p.Changed() {
		r.Changed = append(r.Changed, f.Path)
	}
	for _, w := range p.Warnings {
		r.Warnings = append(r.Warnings, w.String())
	}
	for _, f := range p.Files {
		for _, d := range f.Docs {
			if d.Outcome.From == d.Outcome.To && !d.NeedsPerson() {
				continue
			}
			dr := DocReport{
				File: f.Path, Line: d.ObjectLine(), Kind: d.Ref.Kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name,
				From: d.Ref.APIVersion, Converted: d.Converts(), Notes: append(d.Notes, d.Outcome.Notes...),
				Manual: d.Outcome.Manual, Skip: d.Skip, Source: d.Source,
			}
			if d.Outcome.To != d.Outcome.From {
				dr.To = d.Outcome.To.APIVersion()
			}
			for _, v := range d.Outcome.Via {
				dr.Via = append(dr.Via, v.APIVersion())
			}
			r.Documents = append(r.Documents, dr)
		}
	}
	if r.Manual == nil {
		r.Manual = []Item{}
	}
	if r.Notes == nil {
		r.Notes = []Item{}
	}
	return r
}

// WriteText writes what a person reads after the diff: what needs them, then the notes.
func (p *Plan) WriteText(w io.Writer) {
	if m := p.Manual(); len(m) > 0 {
		fmt.Fprintf(w, "\nNeeds a person (%d, left untouched):\n", len(m))
		for _, it := range m {
			fmt.Fprintln(w, "  "+it.String())
		}
	}
	if n := p.Notes(); len(n) > 0 {
		fmt.Fprintf(w, "\nNotes (%d):\n", len(n))
		for _, it := range n {
			fmt.Fprintln(w, "  "+it.String())
		}
	}
	if n := len(p.Excluded) + p.ExcludedOmitted; n > 0 {
		fmt.Fprintf(w, "\nExcluded (%d, not read):\n", n)
		for _, x := range p.Excluded {
			fmt.Fprintf(w, "  %s (%s, %s)\n", x.Path, x.Pattern, x.Origin)
		}
		if p.ExcludedOmitted > 0 {
			fmt.Fprintf(w, "  and %d more\n", p.ExcludedOmitted)
		}
	}
}
