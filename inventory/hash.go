package inventory

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Hash is the canonical identity of a document: the sha256 of its JSON with the collection
// time zeroed, so two collections that saw the same cluster state hash alike.
func (d *Document) Hash() (string, error) {
	c := *d
	c.CollectedAt = time.Time{}
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// HashJSON is the identity of a valid document's JSON as it was sent (Parse accepted it):
// the sha256 of its bytes around the top-level collectedAt member. The fleet server hashes
// every push with it to find a cluster's unchanged inventory; it reads the bytes up to
// collectedAt (near the start, as Document orders its fields) and hashes the rest as it
// is, where Hash encodes the whole document again (about 6 ms for a 500-namespace cluster).
// An agent writes the same state as the same bytes, so an unchanged cluster still hashes
// alike; the same state written differently (another encoder) does not.
func HashJSON(data []byte) (string, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", fmt.Errorf("hash inventory: not a JSON object")
	}
	for dec.PeekKind() == '"' {
		start := dec.InputOffset()
		tok, err := dec.ReadToken()
		if err != nil {
			return "", fmt.Errorf("hash inventory: %w", err)
		}
		collected := tok.String() == "collectedAt" // read before the next call voids tok
		if err := dec.SkipValue(); err != nil {
			return "", fmt.Errorf("hash inventory: %w", err)
		}
		if collected {
			return sum(data[:start], data[dec.InputOffset():]), nil
		}
	}
	return sum(data), nil
}

// sum is the sha256 of parts, each preceded by its length so no two splits hash alike.
func sum(parts ...[]byte) string {
	h := sha256.New()
	for _, part := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
