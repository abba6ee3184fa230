package push

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
	sent := Envelope{SchemaVersion: SchemaVersion, ClusterName: "prod-eu-1", AgentVersion: "0.3.0", KBVersion: "2026-11-29.5",
		Bundles: []Bundle{{Name: "rules", Revision: "2026-11-30.12"}, {Name: "kb", Revision: "2026-11-30.1"}}, Inventory: doc("v1.35.2")}
	body, err := Encode(sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(body), "gzip")
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterName != sent.ClusterName || got.AgentVersion != sent.AgentVersion || got.KBVersion != sent.KBVersion ||
		got.Inventory.ServerVersion != "v1.35.2" || BundlesKey(got.Bundles) != "|rules=2026-11-30.12|kb=2026-11-30.1" {
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

// splitEnvelope must read every envelope as encoding/json does; the fuzz target holds it to
// that on inputs nobody wrote down.
func TestTheEnvelopeIsSplitAsEncodingJSONSplitsIt(t *testing.T) {
	for _, tt := range envelopeSplits {
		t.Run(tt.name, func(t *testing.T) { checkSplit(t, []byte(tt.body)) })
	}
}

var envelopeSplits = []struct{ name, body string }{
	{"an envelope as the agent writes it", `{"schemaVersion":1,"clusterName":"prod","agentVersion":"0.3.0","kbVersion":"k","inventory":{"a":[1,2]}}`},
	{"names in another case", `{"SchemaVersion":1,"CLUSTERNAME":"prod","Inventory":{"a":1}}`},
	{"a repeated name, the last winning", `{"schemaVersion":1,"clusterName":"a","clusterName":"b","inventory":{},"inventory":[3]}`},
	{"a repeated name in two cases", `{"clusterName":"a","ClusterName":"b","inventory":1}`},
	{"members the envelope does not know", `{"schemaVersion":1,"extra":{"x":[null]},"inventory":{}}`},
	{"whitespace around the inventory", "{\"inventory\" :\n\t {\"a\" : 1 } \n,\"schemaVersion\":1}"},
	{"invalid UTF-8 in a name", "{\"clusterName\":\"pr\xffod\",\"inventory\":{}}"},
	{"invalid UTF-8 in the inventory", "{\"inventory\":{\"a\":\"\xfe\"}}"},
	{"a null inventory", `{"schemaVersion":1,"inventory":null}`},
	{"a document that is null", `null`},
	{"bundles as the agent writes them", `{"schemaVersion":1,"bundles":[{"name":"kb","revision":"r1"},{"name":"rules","revision":"r2"}],"inventory":{}}`},
	{"bundles repeated, in another case, with nulls", `{"bundles":[{"name":"a"}],"Bundles":[null,{"NAME":"b","revision":"1","name":"c"}],"inventory":{}}`},
	{"bundles of the wrong type", `{"bundles":{"name":"kb"},"inventory":{}}`},
	{"a version that is not an integer", `{"schemaVersion":1.0,"inventory":{}}`},
	{"a version in quotes", `{"schemaVersion":"1","inventory":{}}`},
	{"a name that is a number", `{"clusterName":7,"inventory":{}}`},
	{"trailing data", `{"inventory":{}} {}`},
	{"an unterminated inventory", `{"inventory":{"a":`},
	{"an envelope that is an array", `[1]`},
	{"names with an underscore or a dash", `{"schemaVersion":1,"cluster_name":"evil","kb-version":"x","inventory":{}}`},
	{"a repeated name whose last value is null", `{"schemaVersion":1,"clusterName":"prod","clusterName":null,"inventory":{}}`},
	{"a repeated version whose last value is null", `{"schemaVersion":1,"schemaVersion":null,"inventory":{}}`},
	{"a repeated inventory whose last value is null", `{"inventory":{"a":1},"inventory":null}`},
	{"a name that is null", `{"clusterName":null,"inventory":{}}`},
}

func checkSplit(t *testing.T, data []byte) {
	t.Helper()
	got, err := splitEnvelope(data)
	var want envelopeFields
	wantErr := json.Unmarshal(data, &want)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("splitEnvelope error = %v, encoding/json's = %v", err, wantErr)
	case err != nil && err.Error() != wantErr.Error():
		t.Fatalf("splitEnvelope error = %q, want encoding/json's %q", err, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("splitEnvelope = %+v, encoding/json gives %+v", got, want)
	}
}

func FuzzSplitEnvelope(f *testing.F) {
	for _, tt := range envelopeSplits {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(checkSplit)
}

// A server keeps a push whose bundle list it cannot record whole: the odd entries go, the
// inventory stays.
func TestDecodeKeepsAPushWithOddBundlesAndDropsThem(t *testing.T) {
	valid := `{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-29T12:00:00Z","capabilities":{},"apiUsage":[]}`
	var many strings.Builder
	for i := range MaxBundles + 1 {
		fmt.Fprintf(&many, `{"name":"b%02d","revision":"1"},`, i)
	}
	tests := []struct {
		name, bundles, want string
	}{
		{"a bundle without a revision", `[{"name":"kb"},{"name":"rules","revision":"r1"}]`, "|rules=r1"},
		{"a name with the key's separators", `[{"name":"a=b","revision":"1"},{"name":"c|d","revision":"1"}]`, ""},
		{"a name past 256 bytes", `[{"name":"` + strings.Repeat("n", 257) + `","revision":"1"}]`, ""},
		{"more bundles than a server records", `[` + strings.TrimSuffix(many.String(), ",") + `]`, firstBundles(MaxBundles)},
		{"a name twice: the first", `[{"name":"kb","revision":"1"},{"name":"kb","revision":"2"}]`, "|kb=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"schemaVersion":1,"clusterName":"a","bundles":` + tt.bundles + `,"inventory":` + valid + `}`
			env, err := Decode(strings.NewReader(body), "")
			if err != nil {
				t.Fatalf("Decode refused the push: %v", err)
			}
			if got := BundlesKey(env.Bundles); got != tt.want {
				t.Errorf("bundles %q, want %q", got, tt.want)
			}
		})
	}
}

func firstBundles(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "|b%02d=1", i)
	}
	return b.String()
}
