package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/upgradescope/upgradescope/inventory"
)

func eventList(t testing.TB, calls ...call) auditv1.EventList {
	t.Helper()
	l := auditv1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "audit.k8s.io/v1"}}
	for _, c := range calls {
		l.Items = append(l.Items, c.event(t))
	}
	return l
}

func marshal(t testing.TB, v any, indent bool) string {
	t.Helper()
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDocumentsHoldingRecordsAreRead(t *testing.T) {
	a, b := fsList("a/1"), fsList("b/1")
	events := []auditv1.Event{a.event(t), b.event(t)}
	list := eventList(t, a, b)
	for _, tt := range []struct{ name, doc string }{
		{"an indented array", marshal(t, events, true)},
		{"an array on one line", marshal(t, events, false)},
		{"an indented EventList", marshal(t, list, true)},
		{"an EventList on one line", marshal(t, list, false)},
		{"EventLists as JSON lines", marshal(t, eventList(t, a), false) + "\n" + marshal(t, eventList(t, b), false) + "\n"},
		{"indented events one after another, as jq prints them", marshal(t, events[0], true) + "\n" + marshal(t, events[1], true) + "\n"},
		{"the events of aws logs filter-log-events", marshal(t, map[string]any{"events": events, "searchedLogStreams": []any{}}, true)},
		{"the records of an Azure export", marshal(t, map[string]any{"records": events}, true)},
		{"entries", marshal(t, map[string]any{"entries": events, "nextPageToken": "x"}, true)},
		{"the list after other members", `{"kind":"EventList","metadata":{"resourceVersion":"1"},"items":` + marshal(t, events, true) + `,"more":true}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, c := stdin(t, tt.doc)
			if s.Events != 2 || s.DeprecatedRequests != 2 || len(s.Callers) != 2 || s.Malformed != 0 || c.Partial {
				t.Errorf("events %d, deprecated %d, callers %d, malformed %v; want both read", s.Events, s.DeprecatedRequests, len(s.Callers), s.MalformedAt)
			}
		})
	}
}

func TestRecordsInDocumentsAreNamedByLineAndPointer(t *testing.T) {
	a := fsList("a/1")
	doc := "{\n  \"kind\": \"EventList\",\n  \"items\": [\n" +
		"    " + marshal(t, a.event(t), false) + ",\n" +
		"    {\"kind\": \"Event\", \"apiVersion\": \"audit.k8s.io/v1\", \"auditID\": \"x\"},\n" +
		"    42\n  ]\n}\n" +
		"[\n  {\"stage\": 5}\n]\n"
	s, _ := stdin(t, doc)
	want := []string{
		"-:5: /items/1: no stageTimestamp",
		"-:6: /items/2: a JSON number, want an object",
		"-:10: /0: /stage is a JSON number, want a string",
	}
	if strings.Join(s.MalformedAt, "\n") != strings.Join(want, "\n") || s.Events != 1 {
		t.Errorf("malformed:\n%s\nwant:\n%s", strings.Join(s.MalformedAt, "\n"), strings.Join(want, "\n"))
	}
}

func TestADocumentStopsAtItsFirstBreakKeepingWhatWasRead(t *testing.T) {
	a := marshal(t, fsList("a/1").event(t), false)
	for _, tt := range []struct{ name, doc, want string }{
		{"a syntax error", "[\n" + a + ",\n" + a + ",\n  {oops}\n, " + a + "]", "-:4: not JSON; the rest of the file is not read"},
		{"a truncated document", "[\n" + a + ",\n" + a + ",\n" + a[:40], "the document ends early"},
		{"a scalar at the top", "[" + a + "," + a + "]\n\"text\"\n", `-:2: a JSON string, not a record`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := stdin(t, tt.doc)
			if s.Events != 2 || s.Malformed != 1 || !strings.Contains(s.MalformedAt[0], tt.want) {
				t.Errorf("events %d, malformed %v; want 2 read, then %q", s.Events, s.MalformedAt, tt.want)
			}
		})
	}
}

func TestARecordOfADocumentPastTheBoundStopsTheFile(t *testing.T) {
	c := fsList("a/1")
	c.requestObject = `{"data":"` + strings.Repeat("x", maxRecord) + `"}`
	doc := "[\n" + marshal(t, fsList("a/1").event(t), false) + ",\n" + marshal(t, c.event(t), false) + "]"
	s, _ := stdin(t, doc)
	if s.Events != 1 || s.Malformed != 1 || !strings.Contains(s.MalformedAt[0], "a record larger than 16 MiB; the rest of the file is not read") {
		t.Errorf("events %d, malformed %v; want the first read, the second refused", s.Events, s.MalformedAt)
	}
}

// Audit events hold request bodies, tokens in URLs and user names: a malformed record is
// named by where it is and why, never by what it holds.
func TestMalformedRecordsAreNamedWithoutTheirContent(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9.SECRET"
	for _, tt := range []struct{ name, line, want string }{
		{"text", "Authorization: Bearer " + secret, "not JSON"},
		{"broken JSON", `{"kind":"Event","auditID":"` + secret, "not JSON (syntax error at byte 54)"},
		{"an invalid character", `{"kind":"Event","auditID":` + secret + `}`, "not JSON (syntax error at byte 26)"},
		{"a wrong type in a known field", `{"auditID":"x","user":{"username":["` + secret + `"]}}`, "/user/username is a JSON array, want a string"},
		{"a wrong type under an annotation named by the secret", `{"auditID":"x","annotations":{"` + secret + `":5}}`, "/annotations is a JSON number, want a string"},
		{"not an audit event", `{"message":"` + secret + `"}`, "not an audit event (no auditID or stage) nor a managed provider's record"},
		{"a bad time", `{"auditID":"x","stageTimestamp":"` + secret + `"}`, "stageTimestamp is not an RFC 3339 time"},
		{"a timestamp then no record", "2026-12-01T10:00:00Z " + secret, "not JSON"},
		{"records nested past the bound", `{"items":[{"items":[{"items":[{"items":["` + secret + `"]}]}]}]}`, "/items/0/items/0: records nested more than 3 deep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := stdin(t, tt.line+"\n")
			if s.Malformed != 1 || !strings.HasSuffix(s.MalformedAt[0], tt.want) {
				t.Errorf("malformed %v, want one ending %q", s.MalformedAt, tt.want)
			}
			if strings.Contains(fmt.Sprint(s.MalformedAt), "SECRET") {
				t.Errorf("malformed %v quotes the record", s.MalformedAt)
			}
		})
	}
}

func TestAWebhookBatchIsReadIntoTheAggregation(t *testing.T) {
	a := NewAggregator(since)
	batch := marshal(t, eventList(t, fsList("a/1"), fsList("a/1")), false)
	for range 2 {
		if err := a.ReadEventList(strings.NewReader(batch), 1<<20, "webhook"); err != nil {
			t.Fatal(err)
		}
	}
	s := a.Section()
	validate(t, s)
	want := []inventory.AuditSource{{Path: "webhook", Format: "event", Events: 4}}
	if s.Events != 4 || len(s.Callers) != 1 || s.Callers[0].Count != 4 || fmt.Sprint(s.Sources) != fmt.Sprint(want) {
		t.Errorf("events %d, callers %+v, sources %+v; want 4 events of one caller from one webhook source", s.Events, s.Callers, s.Sources)
	}
}

func TestABadWebhookBatchIsAnErrorAndChangesNothing(t *testing.T) {
	good := marshal(t, eventList(t, fsList("a/1")), false)
	for _, tt := range []struct{ name, body, want string }{
		{"past the limit", good, "larger than the 100 bytes a batch may hold"},
		{"not JSON", good[:len(good)-1], "not an audit.k8s.io/v1 EventList: not JSON"},
		{"an array", "[" + good + "]", "not an audit.k8s.io/v1 EventList: a JSON array, want an object"},
		{"another kind", strings.Replace(good, `"EventList"`, `"Status"`, 1), "its kind is not EventList"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAggregator(since)
			limit := int64(1 << 20)
			if tt.name == "past the limit" {
				limit = 100
			}
			err := a.ReadEventList(strings.NewReader(tt.body), limit, "webhook")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one saying %q", err, tt.want)
			}
			if s := a.Section(); s.Events != 0 || s.Malformed != 0 || len(s.Sources) != 0 {
				t.Errorf("the refused batch changed the aggregation: %+v", s)
			}
		})
	}
}

func TestMalformedItemsOfAWebhookBatchAreCounted(t *testing.T) {
	a := NewAggregator(since)
	body := `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[` + marshal(t, fsList("a/1").event(t), false) + `,{"auditID":"x"}]}`
	if err := a.ReadEventList(strings.NewReader(body), 1<<20, "webhook"); err != nil {
		t.Fatal(err)
	}
	if s := a.Section(); s.Events != 1 || s.Malformed != 1 || s.MalformedAt[0] != "webhook:1: /items/1: no stageTimestamp" {
		t.Errorf("events %d, malformed %v; want one read, one named", s.Events, s.MalformedAt)
	}
}
