package mcpserver

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/report"
)

// minDiff is the least of a diff worth showing clipped; with less room the answer says how
// to see it instead.
const minDiff = 160

// FixChange is what upgradescope fix would do about this finding. fix converts objects
// written at an API version the target does not serve: for a finding about such a version, the
// conversions of its objects, what needs a person, the notes and the diff of the lines they
// change; for a finding about anything else, nothing, and the findings that what fix does to
// its objects is for. Nothing is written.
type FixChange struct {
	Command      string   `json:"command" jsonschema:"the command that shows or writes the whole fix"`
	Changes      string   `json:"changes" jsonschema:"what fix would do for this finding, in a sentence"`
	Files        []string `json:"files,omitempty" jsonschema:"files fix would rewrite for this finding"`
	Objects      []string `json:"objects,omitempty" jsonschema:"per object: file:line Kind namespace/name: apiVersion before → after, or why a person must"`
	Manual       []string `json:"manual,omitempty" jsonschema:"what needs a person, left untouched"`
	Notes        []string `json:"notes,omitempty" jsonschema:"what a reader of the rewritten files must know"`
	ConvertedFor []string `json:"convertedFor,omitempty" jsonschema:"for a finding about something fix does not change: the findings what fix does to its objects is for; explain one of them for that diff"`
	Diff         string   `json:"diff,omitempty" jsonschema:"unified diff of the hunks that change this finding's objects"`
	DiffNote     string   `json:"diffNote,omitempty"`
}

// summary is fp within b, the fields it shortened named in c.
func (fp *fixPlanned) summary(c *clipper, b budget) *FixChange {
	fx := &FixChange{Command: fp.command, Changes: c.text("fix", fp.changes, max(b.text, maxLine)),
		Files: c.list("fix", fp.files, b), Objects: c.list("fix", fp.objects, b), Manual: c.list("fix", fp.manual, b),
		Notes: c.list("fix", fp.notes, b), ConvertedFor: c.list("fix", fp.convertedFor, b)}
	if len(fp.hunks) > 0 {
		fx.DiffNote = "left out to stay within 4 KB: run the command to see it"
	}
	return fx
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
	note := "the first hunk clipped to fit 4 KB: run the command for the whole diff"
	if b, ok := withClipped(fc.hunks[0], func(diff string) (ExplainAnswer, bool) { return with(diff, note) }); ok {
		*a = b
	}
}

// withClipped is the answer with the longest clip of hunk, alone too long, at a line end that
// fits, if one of at least minDiff bytes does: a clip shorter than that is not worth showing.
func withClipped(hunk string, with func(diff string) (ExplainAnswer, bool)) (ExplainAnswer, bool) {
	if len(hunk) <= minDiff {
		return ExplainAnswer{}, false
	}
	atLine := func(n int) string {
		diff := clip(hunk, n)
		if i := strings.LastIndexByte(diff, '\n'); i >= 0 {
			diff = diff[:i+1] + "…"
		}
		return diff
	}
	// Sizes grow with n.
	n := minDiff + sort.Search(len(hunk)-minDiff, func(n int) bool {
		_, ok := with(atLine(minDiff + n + 1))
		return !ok
	})
	b, ok := with(atLine(n))
	return b, ok && len(b.Fix.Diff) >= minDiff
}

// fixPlanned is what fix would do for one finding, whole; the answer bounds it.
type fixPlanned struct {
	command, changes              string
	files, objects, manual, notes []string
	convertedFor                  []string
	// hunks are the diff's, the first of each file with its header.
	hunks    []string
	diffNote string
}

// fixFor plans upgradescope fix over the files sc read, at f's target, as the CLI plans it,
// and keeps what it does about f: to the documents of f's objects at the API version f is
// about. Nothing is written.
func (s *Server) fixFor(sc *scanned, f report.Finding) *fixPlanned {
	fp := &fixPlanned{command: fmt.Sprintf("upgradescope fix --files %s --target %s", s.shown(sc.files), f.Target)}
	plan, err := s.fixes.plan(sc, f.Target, s.planFix)
	if err != nil {
		fp.changes = "not planned: " + err.Error()
		return fp
	}
	k := s.cfg.Engine.KB()
	api, about := findingAPI(k, f)
	mine, others := docsAt(plan, f.Objects, func(d fix.Doc) bool { return about && docAPI(d) == api })
	rep := fp.add(plan, mine)
	if !about {
		fp.convertedFor = convertedFor(k, sc.rep, f, others)
		fp.changes = notAboutSentence(f, len(others), fp.convertedFor)
		return fp
	}
	fp.changes = fixSentence(f, rep, len(fp.files))
	return fp
}

// fileDocs are documents of one file of a plan.
type fileDocs struct {
	file fix.File  // as planned: its diff, and all its documents
	docs []fix.Doc // those of one finding
}

// placedDoc is a document of a plan and the file it is in.
type placedDoc struct {
	file string
	doc  fix.Doc
}

// docsAt are the documents of plan at objects: those ours says the finding is about, by file,
// and the others.
func docsAt(plan *fix.Plan, objects []inventory.ObjectRef, ours func(fix.Doc) bool) ([]fileDocs, []placedDoc) {
	at := map[string]bool{}
	for _, o := range objects {
		if o.File != "" {
			at[o.File+":"+strconv.Itoa(o.Line)] = true
		}
	}
	var mine []fileDocs
	var others []placedDoc
	for _, file := range plan.Files {
		var docs []fix.Doc
		for _, d := range file.Docs {
			switch {
			case !at[file.Path+":"+strconv.Itoa(d.ObjectLine())]:
			case ours(d):
				docs = append(docs, d)
			default:
				others = append(others, placedDoc{file.Path, d})
			}
		}
		if len(docs) > 0 {
			mine = append(mine, fileDocs{file, docs})
		}
	}
	return mine, others
}

// docAPI is the API version a document is written at.
func docAPI(d fix.Doc) convert.GVK { return convert.ParseGVK(d.Ref.APIVersion, d.Ref.Kind) }

// add puts what fix does to mine, documents of plan, into fp: a line and the diff's hunks for
// each document, the files rewritten, what needs a person and the notes. It answers fix's
// report of mine alone.
func (fp *fixPlanned) add(plan *fix.Plan, mine []fileDocs) fix.Report {
	sub := &fix.Plan{Root: plan.Root, Target: plan.Target}
	shared := false
	for _, fd := range mine {
		hunks, sh := findingHunks(fd.file, fd.docs)
		fp.hunks, shared = append(fp.hunks, hunks...), shared || sh
		file := fd.file
		file.Docs = fd.docs
		sub.Files = append(sub.Files, file)
	}
	rep := sub.Report()
	for _, d := range rep.Documents {
		fp.objects = append(fp.objects, docLine(d))
		if d.Converted && !slices.Contains(fp.files, d.File) {
			fp.files = append(fp.files, d.File)
		}
	}
	fp.manual, fp.notes = byLines(rep.Manual), byLines(rep.Notes)
	if shared {
		fp.diffNote = "a hunk shown also changes another finding's object near this one"
	}
	return rep
}

// docLine is what fix does to one document, as "file:line Kind namespace/name: apiVersion
// before → after", or why a person must.
func docLine(d fix.DocReport) string {
	line := fmt.Sprintf("%s:%d %s %s: ", d.File, d.Line, d.Kind, strings.Trim(d.Namespace+"/"+d.Name, "/"))
	switch {
	case d.Converted:
		return line + d.From + " → " + d.To
	case d.Skip != "":
		return line + "left for a person: " + d.Skip
	}
	return line + d.From + ": left for a person"
}

// convertedFor are the keys of the findings at f's target, other than f, whose conversion of
// f's objects fix makes: each about the API version one of others is written at, naming it
// among its objects or, when it names none there (its objects past the report's bound), the
// first about that version.
func convertedFor(k *kb.KB, rep *report.Report, f report.Finding, others []placedDoc) []string {
	var candidates []report.Finding
	for _, t := range rep.Targets {
		if t.Target == f.Target {
			candidates = slices.Concat(t.Findings, t.Suppressed)
		}
	}
	var keys []string
	for _, o := range others {
		api, line := docAPI(o.doc), o.doc.ObjectLine()
		var first, named string
		for _, g := range candidates {
			if g.Key == f.Key {
				continue
			}
			if a, ok := findingAPI(k, g); !ok || a != api {
				continue
			}
			first = cmp.Or(first, g.Key)
			if slices.ContainsFunc(g.Objects, func(r inventory.ObjectRef) bool { return r.File == o.file && r.Line == line }) {
				named = cmp.Or(named, g.Key)
			}
		}
		if key := clip(cmp.Or(named, first), maxLine); key != "" && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys
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

// fixSentence says what fix does for f, a finding about an API version: rep is fix's report
// of the documents of f's objects at that version, which it rewrites in files files.
func fixSentence(f report.Finding, rep fix.Report, files int) string {
	converted := 0
	for _, d := range rep.Documents {
		if d.Converted {
			converted++
		}
	}
	var s string
	switch {
	case len(f.Objects) == 0:
		return "upgradescope fix changes nothing for this finding: it names no object in the files"
	case len(rep.Documents) == 0:
		return fmt.Sprintf("upgradescope fix changes nothing for this finding: it rewrites only objects at an API %s does not serve, and this finding's objects are not", f.Target)
	case converted > 0:
		s = fmt.Sprintf("upgradescope fix would rewrite %s in %s", report.Count(converted, "object"), report.Count(files, "file"))
	default:
		s = "upgradescope fix would rewrite none of this finding's objects"
	}
	if n := len(rep.Manual); n > 0 {
		s += fmt.Sprintf("; %s for a person, left untouched", report.Count(n, "item"))
	}
	if f.ObjectsOmitted > 0 {
		s += fmt.Sprintf(" (for the %d objects the finding lists; the %d it omits are not matched: run the command for all)", len(f.Objects), f.ObjectsOmitted)
	}
	return s
}

// notAboutSentence says what fix does for f, a finding about something else than an API
// version: nothing. It converts others of f's objects for the findings named in keys.
func notAboutSentence(f report.Finding, others int, keys []string) string {
	s := fmt.Sprintf("upgradescope fix does not change what this finding is about: it converts only objects at an API %s does not serve", f.Target)
	if others > 0 && len(keys) > 0 {
		whose := "another finding"
		if len(keys) > 1 {
			whose = "other findings"
		}
		s += fmt.Sprintf("; its conversion of %s of this finding's is for %s (convertedFor): explain that for the diff", report.Count(others, "object"), whose)
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
// header: those with a changed line in one of them. shared says a kept hunk changes another
// document too.
func findingHunks(file fix.File, docs []fix.Doc) ([]string, bool) {
	var buf bytes.Buffer
	if err := (&fix.Plan{Files: []fix.File{file}}).WriteDiff(&buf); err != nil || buf.Len() == 0 {
		return nil, false
	}
	owner := docOwner(file.Docs)
	ours := map[int]bool{}
	for _, d := range docs {
		ours[d.Line] = true
	}
	head, hunks := diffHunks(buf.String())
	var out []string
	shared := false
	for _, h := range hunks {
		if mine, theirs := touches(h, owner, ours); mine {
			out = append(out, head+h)
			head, shared = "", shared || theirs
		}
	}
	return out, shared
}

// docOwner is the first line of the document of docs a line of their file falls in: the last
// starting at or before it, 0 for a line before the first.
func docOwner(docs []fix.Doc) func(line int) int {
	var starts []int
	for _, d := range docs {
		starts = append(starts, d.Line)
	}
	slices.Sort(starts)
	return func(line int) int {
		i, found := slices.BinarySearch(starts, line)
		switch {
		case found:
			return starts[i]
		case i == 0:
			return 0
		}
		return starts[i-1]
	}
}

// diffHunks splits a one-file unified diff into its header, the lines before the first hunk,
// and its hunks, each from its "@@" line.
func diffHunks(diff string) (string, []string) {
	var starts []int
	at := 0
	for l := range strings.Lines(diff) {
		if strings.HasPrefix(l, "@@") {
			starts = append(starts, at)
		}
		at += len(l)
	}
	if len(starts) == 0 {
		return diff, nil
	}
	hunks := make([]string, len(starts))
	for i, start := range starts {
		end := len(diff)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		hunks[i] = diff[start:end]
	}
	return diff[:starts[0]], hunks
}

// touches says whether hunk changes a line of a document ours holds (by its first line), and
// whether one of another. A changed line belongs to the document it falls in (owner); an
// added line to the one of the line before it.
func touches(hunk string, owner func(int) int, ours map[int]bool) (mine, theirs bool) {
	old := 0
	for l := range strings.Lines(hunk) {
		switch {
		case strings.HasPrefix(l, "@@"):
			old = hunkStart(l)
		case strings.HasPrefix(l, "-"):
			mine, theirs = mine || ours[owner(old)], theirs || !ours[owner(old)]
			old++
		case strings.HasPrefix(l, "+"):
			at := owner(old - 1)
			if at == 0 { // added before the first document's first line
				at = owner(old)
			}
			mine, theirs = mine || ours[at], theirs || !ours[at]
		default:
			old++
		}
	}
	return mine, theirs
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
