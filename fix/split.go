package fix

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// source is a document's text as the reader returned it, and how it sits in the file.
type source struct {
	// text is the document as kubectl's reader returns it: its lines, each ended by "\n".
	text []byte
	// raw is the document's bytes in the file, and line the file line text starts on.
	raw  []byte
	line int
	// layout says how the file holds text: verbatim, with "\r\n" line ends, or neither (a
	// mix), when the document cannot be rewritten in place.
	layout layout
	json   bool
	// head is what the document's top-level lines say it is, read once.
	head head
}

// piece is a document as read, before it is converted: what the index and the conversion
// read of it, a third of a Doc's size, since one file may hold hundreds of thousands.
type piece struct {
	src source
	// line is the document's first line; start and end its bytes in the file.
	line, start, end int
	// doc is the document parsed by the index (a CRD, a GitOps source), nil otherwise.
	doc *Doc
}

// toDoc is the document the piece is, as converting it begins.
func (p *piece) toDoc() Doc {
	if p.doc != nil {
		return *p.doc
	}
	return Doc{Line: p.line, Start: p.start, End: p.end, src: p.src}
}

type layout int

const (
	verbatim layout = iota
	crlf
	mixed
)

// splitYAML splits data with kubectl's YAML reader and finds each document it returns in
// data. The reader returns the lines it reads verbatim, except that it ends every line with
// "\n", and drops the separator line that ends a document (one that starts the stream, or
// follows another, is part of the next document's text): so a document is the next lines,
// after the separator that ended the one before.
func splitYAML(data []byte) ([]piece, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(data), 64<<10))
	var docs []piece
	pos, line := 0, 1
	for {
		text, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%d: %w", lineAfterSeparators(data, pos, line), err)
		}
		if len(docs) > 0 && pos < len(data) {
			pos, line = nextLine(data, pos), line+1 // the separator that ended the last one
		}
		start, startLine := pos, line
		for range bytes.Count(text, []byte("\n")) {
			pos, line = nextLine(data, pos), line+1
		}
		first := startLine
		if bytes.HasPrefix(text, []byte("---")) {
			first++ // a separator the reader kept: the document starts after it
		}
		src := source{text: text, raw: data[start:pos], line: startLine, layout: layoutOf(data[start:pos], text)}
		if bytes.Equal(src.raw, text) {
			src.text = src.raw // one copy of the bytes, the file's, kept
		}
		src.head = readHead(src)
		docs = append(docs, piece{line: first, start: start, end: pos, src: src})
	}
}

// lineAfterSeparators is the line a failing read is at, for its error.
func lineAfterSeparators(data []byte, pos, line int) int {
	for pos < len(data) && !bytes.HasPrefix(data[pos:], []byte("---")) {
		pos, line = nextLine(data, pos), line+1
	}
	return line
}

func nextLine(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(data)
}

// layoutOf compares a document's bytes in the file with the reader's text.
func layoutOf(raw, text []byte) layout {
	switch {
	case bytes.Equal(raw, text) || len(raw)+1 == len(text) && bytes.HasPrefix(text, raw):
		return verbatim // the second: a last line without "\n"
	case bytes.Equal(raw, bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))):
		return crlf
	}
	return mixed
}

// splitJSON splits a stream of JSON values (pretty, adjacent or NDJSON) as the files
// collector reads it, each value one document.
func splitJSON(data []byte) ([]piece, error) {
	skip := 0
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		skip = 3
	}
	dec := json.NewDecoder(bytes.NewReader(data[skip:]))
	var docs []piece
	for {
		var raw json.RawMessage
		off := skip + int(dec.InputOffset())
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = skip + int(se.Offset)
			}
			return nil, fmt.Errorf("%d: invalid JSON: %w", lineAt(data, off), err)
		}
		end := skip + int(dec.InputOffset())
		start := end - len(raw)
		src := source{text: data[start:end], raw: data[start:end], line: lineAt(data, start), json: true}
		src.head = readHead(src)
		docs = append(docs, piece{line: lineAt(data, start), start: start, end: end, src: src})
	}
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}
