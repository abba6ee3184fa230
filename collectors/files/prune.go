package files

import "bytes"

// prunedKeys are subtrees no rule reads that make up most of a document's bytes: a CRD's
// openAPIV3Schema is often hundreds of kilobytes.
var prunedKeys = map[string][]byte{
	"CustomResourceDefinition": []byte("openAPIV3Schema:"),
}

// pruneSubtrees blanks the lines of every block-style subtree under key, keeping the line
// count so later lines keep their numbers. A subtree is the key's line and every following
// line indented deeper; blank lines and comments inside it go too. It returns nil when
// nothing was pruned.
func pruneSubtrees(text, key []byte) []byte {
	if !bytes.Contains(text, key) {
		return nil
	}
	out := make([]byte, 0, len(text))
	skipIndent := -1
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = nil
		}
		content := bytes.TrimLeft(line, " ")
		indent := len(line) - len(content)
		blank := len(bytes.TrimSpace(content)) == 0 || content[0] == '#'
		if skipIndent >= 0 && (blank || indent > skipIndent) {
			out = append(out, '\n')
			continue
		}
		skipIndent = -1
		if bytes.HasPrefix(content, key) {
			skipIndent = indent
			out = append(out, '\n')
			continue
		}
		out = append(out, line...)
	}
	return out
}
