package cluster

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/kb"
)

// stored encodes a release's JSON as Helm's drivers store it: gzip, then base64.
func stored(t *testing.T, json string, compress bool) []byte {
	t.Helper()
	raw := []byte(json)
	if compress {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		raw = b.Bytes()
	}
	return []byte(base64.StdEncoding.EncodeToString(raw))
}

func TestAReleaseOfTooManyJSONValuesIsRefusedBeforeHelmDecodesIt(t *testing.T) {
	tinyValues := `{"name":"x","config":{"a":[` + strings.Repeat("1,", MaxReleaseValues) + `1]}}`
	manifest := strings.Repeat(`a: [1,2,{b: c}]\n`, MaxReleaseValues/4)
	tests := []struct {
		name, json string
		compress   bool
		want       string
	}{
		{name: "values of many tiny items, compressed small, are refused", json: tinyValues, compress: true, want: fmt.Sprintf("release of more than %d JSON values refused", MaxReleaseValues)},
		{name: "values of many tiny items stored uncompressed are refused", json: tinyValues, want: fmt.Sprintf("release of more than %d JSON values refused", MaxReleaseValues)},
		{name: "punctuation inside a string, such as the manifest, does not count", json: `{"name":"x","manifest":"` + manifest + `\"[,{:"}`, compress: true},
		{name: "a release of ordinary values is accepted", json: `{"name":"x","config":{"replicas":2,"image":{"tag":"1.2"}},"chart":{"values":{"a":[1,2]}}}`, compress: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPayload(stored(t, tt.json, tt.compress))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestAManifestDocumentPastTheNodeBoundIsNamedAsUnread(t *testing.T) {
	ingress := "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n"
	// 15 MiB of tiny items, under the 16 MiB a record may decompress to: it once parsed into
	// 1.4 GiB of nodes.
	manifest := ingress + "---\n" + "items: [" + strings.Repeat("1,", (15<<20)/2) + "1]\n"
	rel := &releasev1.Release{Name: "shop", Namespace: "prod", Manifest: manifest}
	opts := files.Options{Observe: kb.Observe{Watched: map[string]bool{"extensions/v1beta1/Ingress": true}, BuiltinGroups: map[string]bool{"extensions": true}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, unread := toInventory(rel, opts)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB", alloc>>20)
	if alloc > 128<<20 {
		t.Errorf("reading the manifest allocated %d MiB, want a bounded pass over its bytes", alloc>>20)
	}
	if len(out.ManifestAPIs) != 1 || out.ManifestAPIs[0].Kind != "Ingress" {
		t.Errorf("manifest APIs = %+v, want the Ingress before the refused document", out.ManifestAPIs)
	}
	want := fmt.Sprintf("prod/shop: manifest:6: document of more than %d YAML nodes refused: split it into smaller documents", files.MaxDocumentNodes)
	if len(unread) != 1 || unread[0] != want {
		t.Errorf("unread = %q, want %q", unread, want)
	}
}
