package audit

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// jsonFields are t's fields by JSON name, embedded structs without a name inlined as
// encoding/json inlines them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for n, ft := range jsonFields(f.Type) {
				fields[n] = ft
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

var microTime = reflect.TypeFor[metav1.MicroTime]()

// jsonKind is the JSON a value of t is written as.
func jsonKind(t reflect.Type) string {
	if t == microTime {
		return "string" // RFC 3339 with microseconds
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "array of " + jsonKind(t.Elem())
	case reflect.Map:
		return "object of " + jsonKind(t.Elem())
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// The slim Event reads the upstream Event's JSON: each of its fields, nested ones too, is a
// field of k8s.io/apiserver's audit/v1 Event of the same name and JSON kind, so it cannot
// drift from what the API server writes.
func TestTheSlimEventIsPartOfTheUpstreamEvent(t *testing.T) {
	for _, tt := range []struct {
		name           string
		slim, upstream reflect.Type
	}{
		{"Event", reflect.TypeFor[Event](), reflect.TypeFor[auditv1.Event]()},
		{"the record's own fields", reflect.TypeFor[record](), reflect.TypeFor[auditv1.Event]()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			compareFields(t, "", tt.slim, tt.upstream, map[string]bool{"items": true, "events": true, "records": true, "entries": true})
		})
	}
	t.Run("an EventList's items", func(t *testing.T) {
		if _, ok := jsonFields(reflect.TypeFor[auditv1.EventList]())["items"]; !ok {
			t.Error("auditv1.EventList has no items")
		}
	})
}

func compareFields(t *testing.T, path string, slim, upstream reflect.Type, notEvent map[string]bool) {
	t.Helper()
	theirs, mine := jsonFields(upstream), jsonFields(slim)
	for _, name := range slices.Sorted(maps.Keys(mine)) {
		ours := mine[name]
		if notEvent[name] {
			continue
		}
		their, ok := theirs[name]
		if !ok {
			t.Errorf("%s/%s: the upstream %s has no such field", path, name, upstream)
			continue
		}
		if jsonKind(ours) != jsonKind(their) {
			t.Errorf("%s/%s: ours is a JSON %s, upstream's a JSON %s", path, name, jsonKind(ours), jsonKind(their))
			continue
		}
		if o, u := deref(ours), deref(their); o.Kind() == reflect.Struct && o != microTime {
			compareFields(t, path+"/"+name, o, u, nil)
		}
	}
}

func deref(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// Every field the aggregation reads comes through from an Event the upstream type writes.
func TestAnUpstreamEventReadsAsItsFields(t *testing.T) {
	c := fsList("kubectl/v1.30.0 (linux/amd64) kubernetes/abcdef0")
	c.sub = "status"
	c.ips = []string{"10.0.1.17", "2001:db8::1"}
	c.requestObject = `{"kind":"FlowSchema","spec":{"priorityLevelConfiguration":{"name":"x"}}}`
	e := c.event(t)
	e.ImpersonatedUser = nil
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	a := NewAggregator(since)
	r := newReader(t.Context(), a, nil)
	r.record(b, location{path: "-", line: 1, index: -1}, 0)
	s := a.Section()
	if len(s.Callers) != 1 {
		t.Fatalf("callers = %+v, malformed %v; want one", s.Callers, s.MalformedAt)
	}
	got := s.Callers[0]
	if got.Group != "flowcontrol.apiserver.k8s.io" || got.Version != "v1beta3" || got.Resource != "flowschemas" || got.Subresource != "status" ||
		got.Verb != "list" || got.User != "system:serviceaccount:ops:reporter" || got.ServiceAccount != "ops/reporter" ||
		got.UserAgent != c.agent || strings.Join(got.SourceRanges, " ") != "10.0.1.0/24 2001:db8::/64" ||
		got.RemovedRelease != "1.32" || got.Count != 1 || got.FirstSeen != "2026-12-01T10:00:00Z" {
		t.Errorf("caller = %+v", got)
	}
	if len(s.Kubectl) != 1 || s.Kubectl[0].Version != "v1.30.0" {
		t.Errorf("kubectl = %+v, want v1.30.0", s.Kubectl)
	}
}
