package files

import (
	"bufio"
	"bytes"

	"github.com/upgradescope/upgradescope/inventory"
)

// Listing is what a walk of a directory reads and what it leaves out.
type Listing struct {
	// Paths are the files read, as walked; Base is what they are named relative to.
	Paths []string
	Base  string
	// Skipped warns about what is not read (symlinked directories, named pipes, files past
	// the budget) as Collect does.
	Skipped []Warning
	// Excluded are the paths ex left out, ExcludedOmitted those past their bound.
	Excluded        []inventory.ExcludedPath
	ExcludedOmitted int
}

// List names the files a walk of root reads, in lexical order, within maxBytes in all (0:
// DefaultMaxBytes), leaving out what ex excludes, as Collect does. upgradescope fix reads
// the same files a scan judges through it.
func List(root string, maxBytes int64, ex *Exclude) (Listing, error) {
	l, err := listFiles(root, ex, "")
	if err != nil {
		return Listing{}, err
	}
	paths, skipped := withinBudget(osFiles{}, l.paths, l.root, Options{MaxBytes: maxBytes}.maxBytes(), l.skipped)
	return Listing{Paths: paths, Base: l.root, Skipped: skipped, Excluded: l.excluded.paths, ExcludedOmitted: l.excluded.omitted}, nil
}

// RelPath names path relative to base with forward slashes, as warnings and findings do.
func RelPath(base, path string) string { return relPath(base, path) }

// IsJSON says whether a file's content is read as a JSON stream (its first character that
// is not white space opens a JSON value other than a "{{" template), as the walk decides.
func IsJSON(data []byte) bool {
	data = bytes.TrimPrefix(data, utf8BOM)
	return isJSONStream(bufio.NewReaderSize(bytes.NewReader(data), readBufferBytes))
}
