package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/upgradescope/upgradescope/inventory"
)

// since is the window start of the tests' collections.
var since = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// call is one audited request, written as kube-apiserver's log backend writes it
// (auditv1.Event through encoding/json).
type call struct {
	stage                         auditv1.Stage
	verb, user, agent             string
	group, version, resource, sub string
	ips                           []string
	at                            string // RFC 3339; "" is 2026-12-01T10:00:00.123456Z
	deprecated                    bool
	removed                       string
	requestObject                 string // a body, for RequestResponse-level events
	annotations                   map[string]string
	noObjectRef                   bool
}

// fsList is the deprecated API most tests call.
func fsList(agent string) call {
	return call{verb: "list", user: "system:serviceaccount:ops:reporter", agent: agent,
		group: "flowcontrol.apiserver.k8s.io", version: "v1beta3", resource: "flowschemas",
		ips: []string{"10.0.1.17"}, deprecated: true, removed: "1.32"}
}

func (c call) event(t testing.TB) auditv1.Event {
	t.Helper()
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	if c.at != "" {
		var err error
		if at, err = time.Parse(time.RFC3339Nano, c.at); err != nil {
			t.Fatal(err)
		}
	}
	stage := c.stage
	if stage == "" {
		stage = auditv1.StageResponseComplete
	}
	e := auditv1.Event{
		TypeMeta:                 metav1.TypeMeta{Kind: "Event", APIVersion: "audit.k8s.io/v1"},
		Level:                    auditv1.LevelMetadata,
		AuditID:                  types.UID(fmt.Sprintf("%08x-1111-4222-8333-444455556666", at.UnixNano()&0xffffffff)),
		Stage:                    stage,
		RequestURI:               "/apis/" + c.group + "/" + c.version + "/" + c.resource,
		Verb:                     c.verb,
		User:                     authnv1.UserInfo{Username: c.user, Groups: []string{"system:authenticated"}},
		SourceIPs:                c.ips,
		UserAgent:                c.agent,
		ResponseStatus:           &metav1.Status{Code: 200},
		RequestReceivedTimestamp: metav1.NewMicroTime(at.Add(-time.Millisecond)),
		StageTimestamp:           metav1.NewMicroTime(at),
		Annotations:              map[string]string{"authorization.k8s.io/decision": "allow"},
	}
	if !c.noObjectRef {
		e.ObjectRef = &auditv1.ObjectReference{Resource: c.resource, APIGroup: c.group, APIVersion: c.version, Subresource: c.sub}
	}
	if c.deprecated {
		e.Annotations[AnnotationDeprecated] = "true"
	}
	if c.removed != "" {
		e.Annotations[AnnotationRemovedRelease] = c.removed
	}
	for k, v := range c.annotations {
		e.Annotations[k] = v
	}
	if c.requestObject != "" {
		e.Level = auditv1.LevelRequestResponse
		e.RequestObject = &runtime.Unknown{Raw: []byte(c.requestObject)}
	}
	return e
}

func (c call) line(t testing.TB) string {
	t.Helper()
	b, err := json.Marshal(c.event(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func lines(t testing.TB, calls ...call) string {
	t.Helper()
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.line(t))
	}
	return b.String()
}

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// collect reads paths (and stdin for "-") and fails the test on an error.
func collect(t testing.TB, stdin string, paths ...string) (*inventory.AuditCalls, inventory.Capability) {
	t.Helper()
	s, c, err := Collect(context.Background(), Options{Paths: paths, Stdin: strings.NewReader(stdin), Since: since})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, s)
	return s, c
}

// validate checks s against the inventory's schema in a minimal document.
func validate(t testing.TB, s *inventory.AuditCalls) {
	t.Helper()
	doc := inventory.Document{
		SchemaVersion: 1, Source: "files", CollectedAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		Capabilities: map[string]inventory.Capability{inventory.CapAuditLog: {Available: true}},
		APIUsage:     []inventory.APIUsage{}, AuditCalls: s,
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Fatalf("the schema refuses the section: %v", err)
	}
}

// stdin reads s as standard input.
func stdin(t testing.TB, s string) (*inventory.AuditCalls, inventory.Capability) {
	t.Helper()
	return collect(t, s, "-")
}

// eventForAdd is c as Add takes it: its line decoded into the slim Event.
func (c call) eventForAdd(t testing.TB) *Event {
	t.Helper()
	var e Event
	if err := json.Unmarshal([]byte(c.line(t)), &e); err != nil {
		t.Fatal(err)
	}
	return &e
}
