package inventory

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

//go:embed schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema (2020-12) of the document.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

// MaxDocumentBytes bounds what ReadFile accepts: an inventory is per-GVK aggregates, so the
// 100k-object bench corpora give 0.5 and 0.8 MB. It also bounds what strings cost: a document
// of 4,096-character names decodes into several copies of itself (JSON tree, Go types, OPA
// values), and at 64 MiB that passed 256 MiB of memory.
const MaxDocumentBytes = 16 << 20

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "inventory.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// SchemaError lists every JSON pointer at which a document breaks the schema.
type SchemaError struct {
	Problems []string // "/apiUsage/3/count: got string, want integer"
}

func (e *SchemaError) Error() string {
	return "inventory does not match schema:\n  " + strings.Join(e.Problems, "\n  ")
}

// Validate checks raw JSON against the schema. A document the fast acceptor accepts is
// valid, read in one streaming pass; any other goes through validateSlow, which words the
// refusal.
func Validate(data []byte) error {
	if acceptFast(data) {
		return nil
	}
	return validateSlow(data)
}

// validateSlow is Validate without the fast acceptor: the path that words every refusal.
// The schema's size bounds and MaxValues are checked first in one streaming pass, so a
// hostile document is refused before it is decoded.
func validateSlow(data []byte) error {
	if err := boundsCheck(data); err != nil {
		if _, ok := errors.AsType[*SchemaError](err); ok {
			return err
		}
		return syntaxError(data, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return syntaxError(data, err)
	}
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("compile inventory schema: %w", err)
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &SchemaError{Problems: leafProblems(ve)}
	}
	return err
}

// boundsCheck is prescan behind its fast path: most documents are within bounds, and only
// one that is not needs prescan's account of where.
func boundsCheck(data []byte) error {
	if root, err := schemaLimits(); err == nil && withinBounds(data, root) {
		return nil
	}
	return prescan(data)
}

func leafProblems(ve *jsonschema.ValidationError) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := "/" + strings.Join(e.InstanceLocation, "/") + ": " + e.ErrorKind.LocalizedString(printer)
			if !seen[msg] {
				seen[msg] = true
				out = append(out, msg)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return out
}

// syntaxError turns a JSON decoding error into one naming the line.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: %w", lineAt(data, se.Offset), err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("line %d: %w", lineAt(data, te.Offset), err)
	}
	// The schema library reports trailing data ("000") without an offset; encoding/json
	// finds the same fault with one.
	var v any
	if jerr := json.Unmarshal(data, &v); errors.As(jerr, &se) {
		return fmt.Errorf("line %d: %w", lineAt(data, se.Offset), err)
	}
	return err
}

func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// Parse validates raw JSON and decodes it: with json/v2 when the fast acceptor accepts it,
// otherwise after validateSlow with encoding/json, as before the fast paths.
func Parse(data []byte) (*Document, error) {
	if acceptFast(data) {
		return decodeAccepted(data)
	}
	if err := validateSlow(data); err != nil {
		return nil, err
	}
	return decodeV1(data)
}

// decodeV1 decodes a valid document with encoding/json.
func decodeV1(data []byte) (*Document, error) {
	var d Document
	err := json.Unmarshal(data, &d)
	// encoding/json gives a time.Time its bytes still escaped (Go issue 47353), so an
	// escaped timestamp the schema accepts fails here with no offset; collectedAt is the
	// document's one time.Time (TestEverySchemaPropertyNamesAGoFieldExactly).
	if pe, ok := errors.AsType[*time.ParseError](err); ok {
		return nil, &SchemaError{Problems: []string{"/collectedAt: " + pe.Error()}}
	}
	if err != nil {
		return nil, syntaxError(data, err)
	}
	return &d, nil
}

// ReadFile reads, bounds, validates and decodes an inventory file; errors name the file.
func ReadFile(path string) (*Document, error) {
	// Stat first: opening a FIFO would wait for a writer, and /dev/zero never ends.
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read inventory %s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	defer f.Close()
	data, err := readBounded(f)
	if err != nil {
		return nil, fmt.Errorf("read inventory %s: %w", path, err)
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// readBounded reads f into one buffer sized from its length: growing a buffer as io.ReadAll
// does copies a 60 MiB document several times over, under a memory limit that makes the
// collector run after every copy. A regular file past MaxDocumentBytes is refused unread.
func readBounded(f *os.File) ([]byte, error) {
	var size int64
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = info.Size()
	}
	if size > MaxDocumentBytes {
		return nil, errTooLarge
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxDocumentBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxDocumentBytes {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

var errTooLarge = fmt.Errorf("larger than %d MiB", MaxDocumentBytes>>20)
