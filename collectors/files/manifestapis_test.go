package files

import (
	"reflect"
	"testing"
)

func TestManifestAPIsListsEveryObjectsAPI(t *testing.T) {
	stream := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n" +
		"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\n" +
		"apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata:\n  name: i\n"
	usage, warnings := ManifestAPIs("web 1.0.0", []byte(stream))
	if len(warnings) != 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	var got []string
	for _, u := range usage {
		got = append(got, u.Group+"/"+u.Version+"/"+u.Kind)
	}
	want := []string{"/v1/ConfigMap", "example.com/v1/Widget", "networking.k8s.io/v1beta1/Ingress"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("APIs = %v, want %v", got, want)
	}
}
