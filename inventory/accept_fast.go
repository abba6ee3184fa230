package inventory

// The fast acceptor answers whether data is a document Validate accepts, in one streaming
// pass over jsontext tokens that checks the schema and the bounds together, without the
// generic JSON tree and compiled-schema walk of jsonschema (two thirds of parsing a large
// inventory). Like withinBounds it only ever answers true for a document the slow path
// accepts: a document it refuses, or is unsure of, goes through boundsCheck and jsonschema,
// which word the error exactly as before. FuzzParse and the differential tests
// (accept_differential_test.go: targeted mutations of valid documents, and every value of
// a document that reaches every schema node given each of a set of wrong values) hold it to
// that through checkSlowPathAgreement.
//
// The checks are compiled from schema.json itself (accept_compile.go), not written per
// field, so a schema change cannot leave them behind: a keyword the acceptor does not
// implement marks its subschema unknown, and a document that reaches an unknown subschema
// is never accepted here.

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// acceptFast reports whether data certainly passes Validate. False means only "not
// certainly": the caller runs the slow path for the verdict and its wording.
//
// Duplicate names and invalid UTF-8 (including lone surrogate escapes) make the decoder
// fail, so they are never accepted here: prescan, on the slow path, refuses a duplicate
// name with its JSON pointer, and encoding/json replaces bad bytes with U+FFFD, which only
// the slow path says what yields.
func acceptFast(data []byte) bool {
	root, err := compiledAcceptor()
	return err == nil && acceptWith(root, data)
}

// acceptWith is acceptFast against a compiled schema.
func acceptWith(root *node, data []byte) bool {
	a := &acceptor{dec: jsontext.NewDecoder(bytes.NewBuffer(data))}
	if !a.value(root) {
		return false
	}
	_, err := a.dec.ReadToken()
	return err == io.EOF
}

type acceptor struct {
	dec     *jsontext.Decoder
	values  int
	scratch []byte // unquoted strings that hold escapes
}

// value checks the next value against n, counting it against MaxValues as prescan does.
func (a *acceptor) value(n *node) bool {
	if a.values++; a.values > MaxValues || n.unknown {
		return false
	}
	switch a.dec.PeekKind() {
	case '{':
		return a.object(n)
	case '[':
		return a.array(n)
	case '"':
		s, escaped, ok := a.readString()
		// A formatted string is a time.Time field, which encoding/json hands its raw,
		// still-escaped bytes (Go issue 47353) where json/v2 unescapes first: only the slow
		// path knows that an escaped timestamp the schema accepts still fails to decode.
		return ok && !(escaped && n.format != nil) && n.acceptsString(s, MaxStringLength)
	case '0':
		raw, err := a.dec.ReadValue()
		return err == nil && n.acceptsNumber(raw)
	case 't', 'f', 'n':
		raw, err := a.dec.ReadValue()
		return err == nil && n.acceptsLiteral(raw)
	}
	return false
}

// readString reads the next string, unquoted, and says whether it held an escape. The
// bytes alias the decoder's buffer or the scratch buffer, so they are used before the next
// read.
func (a *acceptor) readString() (s []byte, escaped, ok bool) {
	raw, err := a.dec.ReadValue()
	if err != nil || len(raw) < 2 {
		return nil, false, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], false, true
	}
	a.scratch, err = jsontext.AppendUnquote(a.scratch[:0], raw)
	return a.scratch, true, err == nil
}

func (a *acceptor) object(n *node) bool {
	if !n.allows(typeObject) || n.hasEnum || n.format != nil {
		return false
	}
	if _, err := a.dec.ReadToken(); err != nil {
		return false
	}
	var seen uint64
	for count := 1; a.dec.PeekKind() == '"'; count++ {
		key, _, ok := a.readString()
		if !ok || n.maxProperties >= 0 && count > n.maxProperties || !n.acceptsKey(key) {
			return false
		}
		child, bit, ok := n.child(key)
		if !ok {
			return false
		}
		seen |= bit
		if !a.value(child) {
			return false
		}
	}
	tok, err := a.dec.ReadToken()
	return err == nil && tok.Kind() == '}' && seen&n.requiredMask == n.requiredMask
}

func (a *acceptor) array(n *node) bool {
	if !n.allows(typeArray) || n.hasEnum || n.format != nil {
		return false
	}
	if _, err := a.dec.ReadToken(); err != nil {
		return false
	}
	count := 0
	for ; ; count++ {
		switch a.dec.PeekKind() {
		case ']':
			_, err := a.dec.ReadToken()
			return err == nil && count >= n.minItems
		case jsontext.KindInvalid:
			return false
		}
		if n.maxItems >= 0 && count >= n.maxItems || !a.value(n.items) {
			return false
		}
	}
}

// acceptsKey checks an object's key against propertyNames and against MaxStringLength,
// the bound prescan puts on every key its schema node leaves unbounded.
func (n *node) acceptsKey(key []byte) bool {
	names := n.propertyNames
	if names.unknown {
		return false
	}
	return names.acceptsString(key, MaxStringLength)
}

// acceptsString checks a string (a value, or a key under propertyNames) against n; bound is
// the length prescan allows where n states no maxLength.
func (n *node) acceptsString(s []byte, bound int) bool {
	if !n.allows(typeString) {
		return false
	}
	if n.hasEnum && !n.enumHasString(s) {
		return false
	}
	runes := utf8.RuneCount(s)
	if n.maxLength < 0 && runes > bound || n.maxLength >= 0 && runes > n.maxLength || runes < n.minLength {
		return false
	}
	if n.pattern != nil && !n.pattern.Match(s) {
		return false
	}
	return n.format == nil || n.format(string(s))
}

func (n *node) enumHasString(s []byte) bool {
	for _, e := range n.enumStrings {
		if string(s) == e {
			return true
		}
	}
	return false
}

// acceptsNumber answers only for integers written plainly ("12", "-3", "-0") that fit in
// an int64: jsonschema counts 1.0 and 1e2 as integers too, but encoding/json will not put
// them in an int, and the slow path tells that story.
func (n *node) acceptsNumber(raw []byte) bool {
	v, ok := plainInt(raw)
	if !ok || !n.allows(typeInteger) || n.format != nil {
		return false
	}
	if n.hasEnum && !n.enumHasInt(v) {
		return false
	}
	return !n.hasMinimum || v >= n.minimum
}

func (n *node) enumHasInt(v int64) bool {
	for _, e := range n.enumInts {
		if v == e {
			return true
		}
	}
	return false
}

// plainInt parses an integer literal of at most 18 digits, which cannot overflow an int64.
func plainInt(raw []byte) (int64, bool) {
	digits, neg := raw, false
	if len(digits) > 0 && digits[0] == '-' {
		digits, neg = digits[1:], true
	}
	if len(digits) == 0 || len(digits) > 18 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func (n *node) acceptsLiteral(raw []byte) bool {
	if n.format != nil {
		return false // a format is checked here for strings only
	}
	if raw[0] == 'n' {
		return n.allows(typeNull) && (!n.hasEnum || n.enumNull)
	}
	b := raw[0] == 't'
	if !n.allows(typeBoolean) {
		return false
	}
	if n.hasEnum {
		return b && n.enumTrue || !b && n.enumFalse
	}
	return true
}
