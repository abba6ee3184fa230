package inventory

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// withinBounds answers whether data is one JSON value within the bounds prescan checks,
// without saying which bound a document crosses: a fast path in front of prescan, whose
// encoding/json tokens cost an allocation each (a third of validating a large inventory).
// It only ever answers true for a document prescan accepts (FuzzParse holds it to that), so
// a document it refuses goes through prescan, which words the error as before.
//
// jsontext is the mirror of Go 1.27's encoding/json/jsontext; invalid UTF-8 is allowed, as
// encoding/json's tokenizer allows it, so both see the same tokens. A name given twice in one
// object makes it fail, so prescan names the duplicate: jsontext compares names as they
// decode, escapes resolved and each invalid byte or lone surrogate read as U+FFFD, which is
// how encoding/json decodes them too ("\u0061piUsage" is apiUsage twice).
func withinBounds(data []byte, root *limits) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	w := &boundsWalker{dec: dec}
	if !w.value(root) {
		return false
	}
	_, err := dec.ReadToken()
	return err == io.EOF
}

type boundsWalker struct {
	dec    *jsontext.Decoder
	values int
}

func (w *boundsWalker) value(l *limits) bool {
	tok, err := w.dec.ReadToken()
	if err != nil {
		return false
	}
	if w.values++; w.values > MaxValues {
		return false
	}
	switch tok.Kind() {
	case '{':
		return w.object(l)
	case '[':
		return w.array(l)
	case '"':
		want := MaxStringLength
		if l != nil && l.maxLength > 0 {
			want = l.maxLength
		}
		return utf8.RuneCountInString(tok.String()) <= want
	}
	return true
}

func (w *boundsWalker) object(l *limits) bool {
	for n := 1; w.dec.PeekKind() == '"'; n++ {
		tok, err := w.dec.ReadToken()
		if err != nil {
			return false
		}
		key := tok.String()
		if !keyWithin(key, l) || l != nil && l.maxProperties > 0 && n > l.maxProperties {
			return false
		}
		if !w.value(l.child(key)) {
			return false
		}
	}
	tok, err := w.dec.ReadToken()
	return err == nil && tok.Kind() == '}'
}

// keyWithin is prescanner.key's check, answered as a bool.
func keyWithin(key string, l *limits) bool {
	want := MaxStringLength
	if l != nil && l.maxKeyLength > 0 {
		want = l.maxKeyLength
	}
	if utf8.RuneCountInString(key) > want {
		return false
	}
	if l != nil && l.closed {
		_, ok := l.properties[key]
		return ok
	}
	return true
}

func (w *boundsWalker) array(l *limits) bool {
	var items *limits
	if l != nil {
		items = l.items
	}
	for n := 1; ; n++ {
		switch w.dec.PeekKind() {
		case ']':
			_, err := w.dec.ReadToken()
			return err == nil
		case jsontext.KindInvalid:
			return false
		}
		if l != nil && l.maxItems > 0 && n > l.maxItems {
			return false
		}
		if !w.value(items) {
			return false
		}
	}
}
