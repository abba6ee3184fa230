package mcpserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/report"
)

// minDiff is the least of a diff worth showing clipped; with less room the answer says how
// to see it instead.
const minDiff = 160

// FixChange is what upgradescope fix would do for this finding's objects alone: the
// conversions, what needs a person, the notes and the diff of the lines they change.
// Nothing is written.
type FixChange struct {
	Command  string   `json:"command" jsonschema:"the command that shows or writes the whole fix"`
	Changes  string   `json:"changes" jsonschema:"what fix would do for this finding, in a sentence"`
	Files    []string `json:"files,omitempty" jsonschema:"files fix would rewrite for this finding"`
	Objects  []string `json:"objects,omitempty" jsonschema:"per object: file:line kind name: apiVersion before → after, or why a person must"`
	Manual   []string `json:"manual,omitempty" jsonschema:"what needs a person, left untouched"`
	Notes    []string `json:"notes,omitempty" jsonschema:"what a reader of the rewritten files must know"`
	Diff     string   `json:"diff,omitempty" jsonschema:"unified diff of the hunks that change this finding's objects"`
	DiffNote string   `json:"diffNote,omitempty"`
}

// withDiff puts as much of fc's diff into a as fits: whole, else its first hunks, else the
// first hunk clipped at a line, else nothing (the note set by detailed says how to see it).
func withDiff(a *ExplainAnswer, fc *fixPlanned) {
	with := func(diff, note string) (ExplainAnswer, bool) {
		b := *a
		fx := *a.Fix
		fx.Diff, fx.DiffNote = diff, strings.TrimPrefix(fc.diffNote+"; "+note, "; ")
		b.Fix = &fx
		return b, answerSize(b) <= MaxAnswer
	}
	if b, ok := with(strings.Join(fc.hunks, ""), ""); ok {
		*a = b
		return
	}
	firstHunks := func(n int) (ExplainAnswer, bool) {
		return with(strings.Join(fc.hunks[:n], ""), fmt.Sprintf("the first %d of %d hunks, to fit 4 KB: run the command for the rest", n, len(fc.hunks)))
	}
	if n := sort.Search(len(fc.hunks), func(n int) bool { _, ok := firstHunks(n + 1); return !ok }); n > 0 {
		*a, _ = firstHunks(n)
		return
	}
	// The first hunk alone is too long: the longest clip of it at a line end that fits.
	note := "the first hunk clipped to fit 4 KB: run the command for the whole diff"
	first := fc.hunks[0]
	if len(first) <= minDiff {
		return
	}
	atLine := func(n int) string {
		diff := clip(first, n)
		if i := strings.LastIndexByte(diff, '\n'); i >= 0 {
			diff = diff[:i+1] + "…"
		}
		return diff
	}
	// Sizes grow with n; past minDiff, as a clip shorter than that is not worth showing.
	n := minDiff + sort.Search(len(first)-minDiff, func(n int) bool {
		_, ok := with(atLine(minDiff+n+1), note)
		return !ok
	})
	if b, ok := with(atLine(n), note); ok && len(b.Fix.Diff) >= minDiff {
		*a = b
	}
}

// fixPlanned is what fix would do for one finding, whole; the answer bounds it.
type fixPlanned struct {
	command, changes              string
	files, objects, manual, notes []string
	// hunks are the diff's, the first of each file with its header.
	hunks    []string
	diffNote string
}

// fixFor plans upgradescope fix over the files sc read, at f's target, as the CLI plans it,
// and keeps what concerns f's objects. Nothing is written.
func (s *Server) fixFor(sc *scanned, f report.Finding) *fixPlanned {
	fp := &fixPlanned{command: fmt.Sprintf("upgradescope fix --files %s --target %s", s.shown(sc.files), f.Target)}
	plan, err := s.fixes.plan(sc, f.Target, s.planFix)
	if err != nil {
		fp.changes = "not planned: " + err.Error()
		return fp
	}
	mine := map[string]bool{}
	for _, o := range f.Objects {
		if o.File != "" {
			mine[o.File+":"+strconv.Itoa(o.Line)] = true
		}
	}
	shared := false
	sub := &fix.Plan{Root: plan.Root, Target: plan.Target}
	for _, file := range plan.Files {
		var docs []fix.Doc
		for _, d := range file.Docs {
			if mine[file.Path+":"+strconv.Itoa(d.ObjectLine())] {
				docs = append(docs, d)
			}
		}
		if len(docs) == 0 {
			continue
		}
		hunks, sh := findingHunks(file, docs)
		fp.hunks, shared = append(fp.hunks, hunks...), shared || sh
		file.Docs = docs
		sub.Files = append(sub.Files, file)
	}
	rep := sub.Report()
	converted := 0
	for _, d := range rep.Documents {
		line := fmt.Sprintf("%s:%d %s %s: ", d.File, d.Line, d.Kind, strings.Trim(d.Namespace+"/"+d.Name, "/"))
		switch {
		case d.Converted:
			converted++
			line += d.From + " → " + d.To
			if !slices.Contains(fp.files, d.File) {
				fp.files = append(fp.files, d.File)
			}
		case d.Skip != "":
			line += "left for a person: " + d.Skip
		default:
			line += d.From + ": left for a person"
		}
		fp.objects = append(fp.objects, line)
	}
	fp.manual, fp.notes = byLines(rep.Manual), byLines(rep.Notes)
	fp.changes = fixSentence(f, len(rep.Documents), converted, len(fp.files), len(rep.Manual))
	if shared {
		fp.diffNote = "a hunk shown also changes another finding's object near this one"
	}
	return fp
}

// groupedLines is how many lines one grouped item names before counting the rest.
const groupedLines = 5

// byLines spells items as fix prints them, one line for each that differ only in their
// line: a conversion writes the same note at every path of an Ingress, and sixty copies
// would leave no room for anything else.
func byLines(items []fix.Item) []string {
	var order []fix.Item
	lines := map[fix.Item][]int{}
	for _, it := range items {
		line := it.Line
		it.Line = 0
		if _, seen := lines[it]; !seen {
			order = append(order, it)
		}
		lines[it] = append(lines[it], line)
	}
	out := make([]string, 0, len(order))
	for _, it := range order {
		ls := lines[it]
		at := make([]string, 0, groupedLines)
		for _, l := range ls[:min(len(ls), groupedLines)] {
			at = append(at, strconv.Itoa(l))
		}
		more := ""
		if len(ls) > groupedLines {
			more = fmt.Sprintf(" (+%d more)", len(ls)-groupedLines)
		}
		rest := strings.TrimPrefix(it.String(), it.File+":0") // Item.String is "file:line: …"
		out = append(out, it.File+":"+strings.Join(at, ",")+more+rest)
	}
	return out
}

// fixSentence says what fix does for f: docs of its objects fix names, converted of them in
// files files, manual items left for a person.
func fixSentence(f report.Finding, docs, converted, files, manual int) string {
	var s string
	switch {
	case len(f.Objects) == 0:
		return "upgradescope fix changes nothing for this finding: it names no object in the files"
	case docs == 0:
		return fmt.Sprintf("upgradescope fix changes nothing for this finding: it rewrites only objects at an API %s does not serve, and this finding's objects are not", f.Target)
	case converted > 0:
		s = fmt.Sprintf("upgradescope fix would rewrite %s in %s", report.Count(converted, "object"), report.Count(files, "file"))
	default:
		s = "upgradescope fix would rewrite none of this finding's objects"
	}
	if manual > 0 {
		s += fmt.Sprintf("; %s for a person, left untouched", report.Count(manual, "item"))
	}
	if f.ObjectsOmitted > 0 {
		s += fmt.Sprintf(" (for the %d objects the finding lists; the %d it omits are not matched: run the command for all)", len(f.Objects), f.ObjectsOmitted)
	}
	return s
}

// fixCache keeps the last fix plan explain_finding made, by scan and target: an assistant
// explains several findings of one scan in a row, and a plan over a large tree takes seconds.
// It keeps the files with a document fix names, which the answers read, and no others.
type fixCache struct {
	mu     sync.Mutex
	sc     *scanned
	target string
	last   *fix.Plan
}

// plan is the plan of sc's files at target: the kept one, or build's, kept. Plans are read,
// never changed, so one is shared by concurrent calls.
func (c *fixCache) plan(sc *scanned, target string, build func(abs, target string) (*fix.Plan, error)) (*fix.Plan, error) {
	c.mu.Lock()
	if c.sc == sc && c.target == target {
		defer c.mu.Unlock()
		return c.last, nil
	}
	c.mu.Unlock()
	p, err := build(sc.files, target)
	if err != nil {
		return nil, err
	}
	p.Files = slices.DeleteFunc(p.Files, func(f fix.File) bool { return len(f.Docs) == 0 })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sc, c.target, c.last = sc, target, p
	return p, nil
}

// planFix plans fix over abs, a path the scan read under the root, as upgradescope fix
// --files abs --target target plans it: the same files, exclusions and byte budget, the
// engine's knowledge base. fix's walk follows a symlinked file wherever it leads, so a file
// leading out of the root (the scan skipped it) is refused before anything is read.
func (s *Server) planFix(abs, target string) (*fix.Plan, error) {
	ex, err := s.exclusions(abs)
	if err != nil {
		return nil, err
	}
	listing, err := files.List(abs, s.cfg.Files.MaxBytes, ex)
	if err != nil {
		return nil, err
	}
	// The walk enters no symlinked directory and abs is resolved, so only a file itself can
	// be a link: one lstat each, and the link resolved alone.
	for _, p := range listing.Paths {
		info, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if info.Mode()&os.ModeSymlink == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, err
		}
		if !inside(s.root, real) {
			return nil, fmt.Errorf("%s leads out of the root, and fix would read it: run the command yourself", s.shown(p))
		}
	}
	return fix.Scan(abs, fix.Options{KB: s.cfg.Engine.KB(), Target: target, MaxBytes: s.cfg.Files.MaxBytes,
		SkipServed: true, Retain: fix.RetainDiff, Exclude: ex})
}

// findingHunks are the hunks of file's diff that change docs, the first with the file's
// header: those with a changed line in one of them. A changed line belongs to the named document it falls in (the one starting at
// or before it; an added line to the line before it), and shared says a kept hunk changes
// another document too.
func findingHunks(file fix.File, docs []fix.Doc) ([]string, bool) {
	var buf bytes.Buffer
	one := fix.Plan{Files: []fix.File{file}}
	if err := one.WriteDiff(&buf); err != nil || buf.Len() == 0 {
		return nil, false
	}
	var starts []int
	for _, d := range file.Docs {
		starts = append(starts, d.Line)
	}
	slices.Sort(starts)
	owner := func(line int) int {
		i, found := slices.BinarySearch(starts, line)
		switch {
		case found:
			return starts[i]
		case i == 0:
			return 0
		}
		return starts[i-1]
	}
	ours := map[int]bool{}
	for _, d := range docs {
		ours[d.Line] = true
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	var out []string
	head, shared := "", false
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "@@") {
			head += lines[i]
			i++
			continue
		}
		old := hunkStart(lines[i])
		j, mine, theirs := i+1, false, false
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "@@"); j++ {
			l := lines[j]
			switch {
			case strings.HasPrefix(l, "-"):
				mine, theirs = mine || ours[owner(old)], theirs || !ours[owner(old)]
				old++
			case strings.HasPrefix(l, "+"):
				at := owner(old - 1)
				if at == 0 { // added before the first document's first line
					at = owner(old)
				}
				mine, theirs = mine || ours[at], theirs || !ours[at]
			case l != "":
				old++
			}
		}
		if mine {
			out = append(out, head+strings.Join(lines[i:j], ""))
			head, shared = "", shared || theirs
		}
		i = j
	}
	return out, shared
}

// hunkStart is the first old line of a unified diff hunk header "@@ -a,b +c,d @@".
func hunkStart(header string) int {
	rest, _ := strings.CutPrefix(header, "@@ -")
	end := strings.IndexAny(rest, ", ")
	if end < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:end])
	return n
}
