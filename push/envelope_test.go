package push

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
)

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAnEncodedPushDecodesToTheSameEnvelope(t *testing.T) {
	sent := Envelope{SchemaVersion: SchemaVersion, ClusterName: "prod-eu-1", AgentVersion: "0.3.0", KBVersion: "2026-11-29.5", Inventory: doc("v1.35.2")}
	body, err := Encode(sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(body), "gzip")
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterName != sent.ClusterName || got.AgentVersion != sent.AgentVersion || got.KBVersion != sent.KBVersion ||
		got.Inventory.ServerVersion != "v1.35.2" {
		t.Errorf("decoded %+v, want %+v", got, sent)
	}
}

func TestDecodeRefusesWhatAServerMustNotStore(t *testing.T) {
	valid := `{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-29T12:00:00Z","capabilities":{}}`
	envelope := func(version int, name, inv string) []byte {
		return []byte(`{"schemaVersion":` + string(rune('0'+version)) + `,"clusterName":"` + name + `","inventory":` + inv + `}`)
	}
	bomb := gzipped(t, bytes.Repeat([]byte(" "), MaxBytes+1)) // 20 KiB that inflate past the bound
	tests := []struct {
		name     string
		body     []byte
		encoding string
		want     error
		mentions string
	}{
		{"a gzip bomb", bomb, "gzip", ErrTooLarge, ""},
		{"a body over the bound on the wire", bytes.Repeat([]byte(" "), MaxBytes+1), "identity", ErrTooLarge, ""},
		{"another content encoding", envelope(1, "a", valid), "br", ErrEncoding, `"br"`},
		{"a body that is not gzip", envelope(1, "a", valid), "gzip", ErrInvalid, "gzip"},
		{"a body that is not JSON", []byte("{"), "", ErrInvalid, "unexpected end"},
		{"another protocol version", envelope(2, "a", valid), "", ErrInvalid, "schemaVersion 2"},
		{"an empty cluster name", envelope(1, "", valid), "", ErrInvalid, "clusterName"},
		{"a cluster name that is not RFC 1123", envelope(1, "Prod_EU", valid), "", ErrInvalid, "Prod_EU"},
		{"no inventory", envelope(1, "a", "null"), "", ErrInvalid, "no inventory"},
		{"an inventory that breaks the schema", envelope(1, "a", `{"schemaVersion":1,"source":"cluster","collectedAt":"x","capabilities":{},"apiUsage":[{"count":"3"}]}`),
			"identity", ErrInvalid, "/inventory: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Decode(bytes.NewReader(tt.body), tt.encoding)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("Decode = %v, %v; want %v mentioning %q", env, err, tt.want, tt.mentions)
			}
		})
	}
}
