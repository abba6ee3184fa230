package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
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
