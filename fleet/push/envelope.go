// Package push is the agent→server wire format and its client. The envelope, its encoding and
// its validation live here so the agent that sends and the server that receives agree by
// construction; the client delivers the agent's inventory only when it changed (or a forced
// sync is due), keeping a failed push and retrying it between ticks until it is delivered or a
// newer one supersedes it.
package push

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/upgradescope/upgradescope/inventory"
)

// The wire contract.
const (
	// SchemaVersion is the push protocol's version.
	SchemaVersion = 1
	// Path is where a server accepts pushes.
	Path = "/api/v1/snapshots"
	// ContentType is the body's media type (gzip-encoded on the wire).
	ContentType = "application/json"
	// MaxBytes bounds a push on the wire and decompressed.
	MaxBytes = 20 << 20
)

// Envelope is what one push sends.
type Envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	ClusterName   string `json:"clusterName"`
	AgentVersion  string `json:"agentVersion"`
	KBVersion     string `json:"kbVersion"`
	// Bundles are the bundles the agent evaluates with, by name and revision (agents before
	// this field sent none).
	Bundles   []Bundle            `json:"bundles,omitempty"`
	Inventory *inventory.Document `json:"inventory"`
	// InventoryJSON is the inventory as DecodeJSON read it, so a server can hash what the
	// agent sent (inventory.HashJSON) without encoding it again.
	InventoryJSON []byte `json:"-"`
}

// Bundle names a bundle and its revision.
type Bundle struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

// Bounds of an envelope's bundle list: a handful of bundles, each named like a manifest's
// metadata and revision.
const (
	MaxBundles      = 32
	maxBundleString = 256
)

// BundlesKey is a bundle list's canonical join: equal lists, equal keys.
func BundlesKey(bundles []Bundle) string {
	var b strings.Builder
	for _, x := range bundles {
		fmt.Fprintf(&b, "|%s=%s", x.Name, x.Revision)
	}
	return b.String()
}

// CleanBundles answers the bundles a server records: those whose name and revision are 1 to
// 256 bytes without '|' or '=' (BundlesKey's separators), one per name (the first), the
// first MaxBundles of them. A server keeps a push whose bundle list is odd rather than
// refuse its inventory, and an agent sends only what a server keeps.
func CleanBundles(bundles []Bundle) []Bundle {
	var out []Bundle
	seen := map[string]bool{}
	for _, b := range bundles {
		if len(out) == MaxBundles {
			break
		}
		if validBundleString(b.Name) && validBundleString(b.Revision) && !seen[b.Name] {
			seen[b.Name] = true
			out = append(out, b)
		}
	}
	return out
}

func validBundleString(s string) bool {
	return s != "" && len(s) <= maxBundleString && !strings.ContainsAny(s, "|=")
}

// Encode gzips env's JSON, as a push carries it.
func Encode(env Envelope) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(env); err != nil {
		return nil, fmt.Errorf("encode push: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode push: %w", err)
	}
	return buf.Bytes(), nil
}

// Errors Decode wraps, so a server can answer each with its status code.
var (
	// ErrTooLarge: the body is over its limit on the wire or decompressed (413).
	ErrTooLarge = errors.New("push is too large")
	// ErrEncoding: a Content-Encoding other than gzip or identity (415).
	ErrEncoding = errors.New("unsupported content encoding")
	// ErrInvalid: bad gzip, JSON, protocol version, cluster name or inventory (422).
	ErrInvalid = errors.New("invalid push")
)

// clusterName is an RFC 1123 subdomain: what the agent's --cluster-name and a cluster UID are.
var clusterName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// CheckClusterName answers nil when name is an RFC 1123 subdomain (at most 253 characters,
// lowercase alphanumerics, '-' and '.'), the rule for every cluster name the server keeps.
func CheckClusterName(name string) error {
	if name == "" || len(name) > 253 || !clusterName.MatchString(name) {
		return fmt.Errorf("cluster name %q is not an RFC 1123 subdomain (lowercase letters, digits, '-' and '.')", name)
	}
	return nil
}

// Decode reads one push body sent with contentEncoding ("gzip", "identity" or ""), bounded to
// MaxBytes on the wire and decompressed, and validates the envelope and its inventory against
// the inventory schema. Errors wrap ErrTooLarge, ErrEncoding or ErrInvalid and name the JSON
// pointer of an inventory problem.
func Decode(body io.Reader, contentEncoding string) (*Envelope, error) {
	return DecodeLimit(body, contentEncoding, MaxBytes)
}

// DecodeLimit is Decode bounded to limit bytes on the wire and decompressed instead of
// MaxBytes: a server's --max-snapshot-bytes.
func DecodeLimit(body io.Reader, contentEncoding string, limit int) (*Envelope, error) {
	plain, err := Inflate(body, contentEncoding, limit)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(plain)
}

// Inflate reads a push body sent with contentEncoding and answers its JSON, bounded to
// limit bytes on the wire and decompressed: the first half of DecodeLimit, so a server can
// budget the decode by the size it learns here.
func Inflate(body io.Reader, contentEncoding string, limit int) ([]byte, error) {
	wire, err := readBounded(body, limit)
	if err != nil {
		return nil, err
	}
	switch contentEncoding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrInvalid, err)
		}
		return readBounded(zr, limit)
	case "identity", "":
		return wire, nil
	}
	return nil, fmt.Errorf("%w %q: send gzip or identity", ErrEncoding, contentEncoding)
}

func readBounded(r io.Reader, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// DecodeJSON validates and decodes an envelope's JSON, as Inflate answers it.
func DecodeJSON(data []byte) (*Envelope, error) {
	raw, err := splitEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch {
	case raw.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("%w: schemaVersion %d, want %d", ErrInvalid, raw.SchemaVersion, SchemaVersion)
	case CheckClusterName(raw.ClusterName) != nil:
		return nil, fmt.Errorf("%w: clusterName %q is not an RFC 1123 subdomain", ErrInvalid, raw.ClusterName)
	case len(raw.Inventory) == 0 || string(raw.Inventory) == "null":
		return nil, fmt.Errorf("%w: no inventory", ErrInvalid)
	}
	doc, err := inventory.Parse(raw.Inventory)
	if err != nil {
		return nil, fmt.Errorf("%w: /inventory: %v", ErrInvalid, err)
	}
	return &Envelope{SchemaVersion: raw.SchemaVersion, ClusterName: raw.ClusterName,
		AgentVersion: raw.AgentVersion, KBVersion: raw.KBVersion, Bundles: CleanBundles(raw.Bundles), Inventory: doc,
		InventoryJSON: raw.Inventory}, nil
}

// InventoryJSON answers the inventory member of an envelope DecodeJSON accepted, raw, read
// as DecodeJSON reads it (the last copy of a member named twice); empty when it has none.
// A server reading a stored push back uses it to skip the envelope's validation.
func InventoryJSON(data []byte) (json.RawMessage, error) {
	raw, err := splitEnvelope(data)
	if err != nil {
		return nil, err
	}
	return raw.Inventory, nil
}

// envelopeFields is an envelope with its inventory not yet parsed.
type envelopeFields struct {
	SchemaVersion int             `json:"schemaVersion"`
	ClusterName   string          `json:"clusterName"`
	AgentVersion  string          `json:"agentVersion"`
	KBVersion     string          `json:"kbVersion"`
	Bundles       []Bundle        `json:"bundles"`
	Inventory     json.RawMessage `json:"inventory"`
}

// splitEnvelope reads the envelope's fields and keeps its inventory as raw JSON. The
// go-json-experiment decoder does it in one pass, where encoding/json scans the whole
// megabytes-long inventory for validity before decoding it and again to copy it out (a tenth
// of a push's CPU). It is set to what encoding/json does with these fields (names matched
// without regard to case but with regard to '_' and '-', the last duplicate winning, null
// leaving a field as it was, invalid UTF-8 allowed; all of DefaultOptionsV1 took twice as
// long); anything it refuses goes to encoding/json, whose answer, and error wording, stands.
func splitEnvelope(data []byte) (envelopeFields, error) {
	var fast struct {
		SchemaVersion int            `json:"schemaVersion"`
		ClusterName   string         `json:"clusterName"`
		AgentVersion  string         `json:"agentVersion"`
		KBVersion     string         `json:"kbVersion"`
		Bundles       []Bundle       `json:"bundles"`
		Inventory     jsontext.Value `json:"inventory"`
	}
	err := jsonv2.Unmarshal(data, &fast, jsonv2.MatchCaseInsensitiveNames(true), jsonv1.MatchCaseSensitiveDelimiter(true),
		jsonv1.MergeWithLegacySemantics(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if err == nil {
		return envelopeFields{SchemaVersion: fast.SchemaVersion, ClusterName: fast.ClusterName,
			AgentVersion: fast.AgentVersion, KBVersion: fast.KBVersion, Bundles: fast.Bundles,
			Inventory: json.RawMessage(fast.Inventory)}, nil
	}
	var raw envelopeFields
	err = json.Unmarshal(data, &raw)
	return raw, err
}
