package files

import (
	"bufio"
	"bytes"
)

// List names the files a walk of root reads, in lexical order, within maxBytes in all (0:
// DefaultMaxBytes), and warns about what it does not read (symlinked directories, named pipes,
// files past the budget) as Collect does. Paths are as walked; base is what they are named
// relative to. upgradescope fix reads the same files a scan judges through it.
func List(root string, maxBytes int64) (paths []string, base string, skipped []Warning, err error) {
	paths, base, skipped, err = listFiles(root)
	if err != nil {
		return nil, "", nil, err
	}
	paths, skipped = withinBudget(osFiles{}, paths, base, Options{MaxBytes: maxBytes}.maxBytes(), skipped)
	return paths, base, skipped, nil
}

// RelPath names path relative to base with forward slashes, as warnings and findings do.
func RelPath(base, path string) string { return relPath(base, path) }

// IsJSON says whether a file's content is read as a JSON stream (its first character that
// is not white space opens a JSON value other than a "{{" template), as the walk decides.
func IsJSON(data []byte) bool {
	data = bytes.TrimPrefix(data, utf8BOM)
	return isJSONStream(bufio.NewReaderSize(bytes.NewReader(data), readBufferBytes))
}
