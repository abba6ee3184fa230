package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
)

func TestOnlyFinishedRequestsAreCountedAsRequests(t *testing.T) {
	for _, tt := range []struct {
		stage             auditv1.Stage
		requests, callers int
	}{
		{auditv1.StageResponseComplete, 1, 1},
		{auditv1.StagePanic, 1, 1},
		{auditv1.StageResponseStarted, 0, 0},
		{auditv1.StageRequestReceived, 0, 0},
	} {
		t.Run(string(tt.stage), func(t *testing.T) {
			c := fsList("a/1")
			c.stage = tt.stage
			s, _ := stdin(t, lines(t, c))
			if s.Events != 1 || s.Requests != int64(tt.requests) || s.DeprecatedRequests != int64(tt.requests) || len(s.Callers) != tt.callers {
				t.Errorf("events %d, requests %d, deprecated %d, callers %d; want 1, %d, %d, %d",
					s.Events, s.Requests, s.DeprecatedRequests, len(s.Callers), tt.requests, tt.requests, tt.callers)
			}
		})
	}
	t.Run("an event with no stage, as a provider's export has", func(t *testing.T) {
		a := NewAggregator(since)
		a.Add(&Event{Verb: "list", StageTimestamp: "2026-12-01T10:00:00Z", Annotations: map[string]string{AnnotationDeprecated: "true"},
			ObjectRef: &ObjectReference{APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1beta3", Resource: "flowschemas"}})
		if s := a.Section(); s.Requests != 1 || s.DeprecatedRequests != 1 {
			t.Errorf("requests %d, deprecated %d; want it counted as a request", s.Requests, s.DeprecatedRequests)
		}
	})
}

func TestOnlyRequestsAnnotatedDeprecatedAreCallers(t *testing.T) {
	current := call{verb: "list", user: "u", agent: "a/1", group: "flowcontrol.apiserver.k8s.io", version: "v1", resource: "flowschemas"}
	notTrue := fsList("a/1")
	notTrue.deprecated = false
	notTrue.annotations = map[string]string{AnnotationDeprecated: "false"}
	s, _ := stdin(t, lines(t, current, notTrue, fsList("a/1")))
	if s.Requests != 3 || s.DeprecatedRequests != 1 || len(s.Callers) != 1 {
		t.Errorf("requests %d, deprecated %d, callers %+v; want 3, 1, 1", s.Requests, s.DeprecatedRequests, s.Callers)
	}
}

func TestACallerIsItsAPIVerbUserAndUserAgent(t *testing.T) {
	base := fsList("a/1")
	status := base
	status.sub = "status"
	other := base
	other.verb = "watch"
	core := call{verb: "get", user: "alice", agent: "a/1", version: "v1", resource: "componentstatuses", deprecated: true}
	s, _ := stdin(t, lines(t, base, base, status, other, core))
	var got []string
	for _, c := range s.Callers {
		got = append(got, fmt.Sprintf("%s/%s/%s/%s %s %s %d", c.Group, c.Version, c.Resource, c.Subresource, c.Verb, c.User, c.Count))
	}
	want := []string{
		"flowcontrol.apiserver.k8s.io/v1beta3/flowschemas/ list system:serviceaccount:ops:reporter 2",
		"/v1/componentstatuses/ get alice 1",
		"flowcontrol.apiserver.k8s.io/v1beta3/flowschemas/ watch system:serviceaccount:ops:reporter 1",
		"flowcontrol.apiserver.k8s.io/v1beta3/flowschemas/status list system:serviceaccount:ops:reporter 1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("callers:\n%s\nwant (busiest, then by key):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestServiceAccountsAreNamedNamespaceSlashName(t *testing.T) {
	for _, tt := range []struct{ user, want string }{
		{"system:serviceaccount:ops:reporter", "ops/reporter"},
		{"system:serviceaccount:ops", ""},
		{"system:serviceaccount::reporter", ""},
		{"system:serviceaccount:ops:a:b", ""},
		{"system:node:node-1", ""},
		{"alice@example.com", ""},
	} {
		if got := serviceAccount(tt.user); got != tt.want {
			t.Errorf("serviceAccount(%q) = %q, want %q", tt.user, got, tt.want)
		}
	}
}

func TestSourceAddressesAreKeptAsRanges(t *testing.T) {
	for _, tt := range []struct {
		name    string
		ips     []string
		want    []string
		omitted int
	}{
		{"IPv4 as /24", []string{"10.0.1.17", "10.0.1.200"}, []string{"10.0.1.0/24"}, 0},
		{"IPv6 as /64", []string{"2001:db8:1:2:3:4:5:6"}, []string{"2001:db8:1:2::/64"}, 0},
		{"IPv4 mapped in IPv6 as IPv4", []string{"::ffff:192.0.2.9"}, []string{"192.0.2.0/24"}, 0},
		{"a zone dropped", []string{"fe80::1%eth0"}, []string{"fe80::/64"}, 0},
		{"what is not an address left out", []string{"unknown", ""}, nil, 0},
		{"a proxy chain: every hop", []string{"203.0.113.7", "10.0.0.2"}, []string{"10.0.0.0/24", "203.0.113.0/24"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := fsList("a/1")
			c.ips = tt.ips
			s, _ := stdin(t, lines(t, c))
			if got := s.Callers[0]; !reflect.DeepEqual(got.SourceRanges, tt.want) || got.SourceRangesOmitted != tt.omitted {
				t.Errorf("ranges %v (%d omitted), want %v", got.SourceRanges, got.SourceRangesOmitted, tt.want)
			}
		})
	}
	t.Run("past the bound, requests from other ranges are counted", func(t *testing.T) {
		var calls []call
		for i := range inventory.MaxAuditRanges + 3 {
			c := fsList("a/1")
			c.ips = []string{fmt.Sprintf("10.0.%d.1", i)}
			calls = append(calls, c, c)
		}
		s, _ := stdin(t, lines(t, calls...))
		if got := s.Callers[0]; len(got.SourceRanges) != inventory.MaxAuditRanges || got.SourceRangesOmitted != 6 {
			t.Errorf("%d ranges, %d omitted; want %d and the 6 requests from the 3 others", len(got.SourceRanges), got.SourceRangesOmitted, inventory.MaxAuditRanges)
		}
	})
}

func TestTimesAreUTCToTheSecondWhateverTheOrder(t *testing.T) {
	at := func(s string) call { c := fsList("a/1"); c.at = s; return c }
	s, _ := stdin(t, lines(t, at("2026-12-01T12:00:00.999999+02:00"), at("2026-12-03T00:00:00Z"), at("2026-11-15T23:59:59.5-01:00")))
	c := s.Callers[0]
	if c.FirstSeen != "2026-11-16T00:59:59Z" || c.LastSeen != "2026-12-03T00:00:00Z" || c.Count != 3 {
		t.Errorf("first %s, last %s, count %d; want 2026-11-16T00:59:59Z, 2026-12-03T00:00:00Z, 3", c.FirstSeen, c.LastSeen, c.Count)
	}
}

func TestEventsOlderThanTheWindowAreStillCounted(t *testing.T) {
	c := fsList("a/1")
	c.at = "2020-01-01T00:00:00Z"
	s, _ := stdin(t, lines(t, c))
	if s.Since != "2026-11-01T00:00:00Z" || len(s.Callers) != 1 || s.Callers[0].LastSeen != "2020-01-01T00:00:00Z" {
		t.Errorf("since %s, callers %+v; want the old caller listed, the rules judge it", s.Since, s.Callers)
	}
}

func TestAnEventWithoutAReadableTimeIsMalformed(t *testing.T) {
	for _, tt := range []struct{ name, ts, want string }{
		{"missing", ``, "no stageTimestamp"},
		{"not a time", `"yesterday"`, "stageTimestamp is not an RFC 3339 time"},
		{"a year past four digits in UTC", `"9999-12-31T23:59:59-01:00"`, "stageTimestamp is not an RFC 3339 time"},
		{"a number", `1733000000`, "/stageTimestamp is a JSON number, want a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"x","stage":"ResponseComplete"`
			if tt.ts != "" {
				line += `,"stageTimestamp":` + tt.ts
			}
			s, c := stdin(t, line+"}\n")
			if s.Events != 0 || s.Malformed != 1 || s.MalformedAt[0] != "-:1: "+tt.want || c.Available {
				t.Errorf("events %d, malformed %v, capability %+v; want -:1: %s", s.Events, s.MalformedAt, c, tt.want)
			}
		})
	}
}

func TestTheRemovedReleaseKeptIsTheSmallestGiven(t *testing.T) {
	later, none := fsList("a/1"), fsList("a/1")
	later.removed, none.removed = "1.33", ""
	s, _ := stdin(t, lines(t, later, none, fsList("a/1")))
	if got := s.Callers[0].RemovedRelease; got != "1.32" {
		t.Errorf("removed release %q, want 1.32 whatever the order", got)
	}
}

func TestKubectlVersionsAreCountedFromEveryRequest(t *testing.T) {
	kubectl := func(version, user string) call {
		return call{verb: "get", user: user, agent: "kubectl/" + version + " (linux/amd64) kubernetes/abcdef0", version: "v1", resource: "pods"}
	}
	var calls []call
	for i := range inventory.MaxKubectlUsers + 2 {
		calls = append(calls, kubectl("v1.28.2", "user-"+strconv.Itoa(i)))
	}
	calls = append(calls, kubectl("v1.30.0", "alice"), kubectl("v1.30.0", "alice"))
	started := kubectl("v1.31.0", "bob")
	started.stage = auditv1.StageResponseStarted
	calls = append(calls, started, call{verb: "get", user: "carol", agent: "kubectl-convert/v1.30.0", version: "v1", resource: "pods"})
	s, _ := stdin(t, lines(t, calls...))
	if len(s.Kubectl) != 2 {
		t.Fatalf("kubectl = %+v, want v1.28.2 and v1.30.0", s.Kubectl)
	}
	k := s.Kubectl[0]
	if k.Version != "v1.28.2" || k.Count != int64(inventory.MaxKubectlUsers+2) || len(k.Users) != inventory.MaxKubectlUsers || k.UsersOmitted != 2 {
		t.Errorf("first = %+v, want v1.28.2 by %d users, 2 requests by users past them", k, inventory.MaxKubectlUsers)
	}
	if k := s.Kubectl[1]; k.Version != "v1.30.0" || k.Count != 2 || !reflect.DeepEqual(k.Users, []string{"alice"}) {
		t.Errorf("second = %+v, want v1.30.0 twice by alice", k)
	}
	t.Run("past the bound, versions are counted", func(t *testing.T) {
		a := NewAggregator(since)
		for i := range inventory.MaxKubectlVersions + 5 {
			a.Add(&Event{Stage: "ResponseComplete", UserAgent: fmt.Sprintf("kubectl/v1.%d.0", i), StageTimestamp: "2026-12-01T10:00:00Z"})
		}
		a.Add(&Event{Stage: "ResponseComplete", UserAgent: "kubectl/v1.200.0", StageTimestamp: "2026-12-01T10:00:00Z"})
		s := a.Section()
		if len(s.Kubectl) != inventory.MaxKubectlVersions || s.KubectlOmitted != 6 {
			t.Errorf("%d versions, %d omitted; want %d and 6 calls", len(s.Kubectl), s.KubectlOmitted, inventory.MaxKubectlVersions)
		}
		validate(t, s)
	})
}

func TestLongStringsAreCutToTheBound(t *testing.T) {
	c := fsList(strings.Repeat("é", inventory.MaxStringLength+10))
	c.user = strings.Repeat("ü", 150_000)
	c.verb = strings.Repeat("v", 100)
	s, _ := stdin(t, lines(t, c))
	got := s.Callers[0]
	if n := len([]rune(got.UserAgent)); n != maxIdentity {
		t.Errorf("user agent of %d characters, want %d", n, maxIdentity)
	}
	if n := len([]rune(got.User)); n != maxIdentity {
		t.Errorf("user of %d characters, want %d", n, maxIdentity)
	}
	if n := len(got.Verb); n != maxVerb {
		t.Errorf("verb of %d characters, want %d", n, maxVerb)
	}
}

// distinctAgents writes n deprecated requests, each with a user agent of its own, as a
// stream: the log is never held.
type distinctAgents struct {
	n, i int
	buf  []byte
}

func (d *distinctAgents) Read(p []byte) (int, error) {
	for len(d.buf) < len(p) && d.i < d.n {
		d.buf = fmt.Appendf(d.buf, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"%d","stage":"ResponseComplete","verb":"list","user":{"username":"u"},"userAgent":"agent-%07d","objectRef":{"resource":"flowschemas","apiGroup":"flowcontrol.apiserver.k8s.io","apiVersion":"v1beta3"},"stageTimestamp":"2026-12-01T10:00:00.000001Z","annotations":{"k8s.io/deprecated":"true","k8s.io/removed-release":"1.32"}}`+"\n", d.i, d.i)
		d.i++
	}
	if len(d.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, d.buf)
	d.buf = d.buf[:copy(d.buf, d.buf[n:])]
	return n, nil
}

func TestAMillionDistinctUserAgentsStayWithinBounds(t *testing.T) {
	const n = 1_000_000
	r := newReader(context.Background(), NewAggregator(since), &distinctAgents{n: n})
	if err := r.readPath("-"); err != nil {
		t.Fatal(err)
	}
	if got := len(r.agg.callers); got != inventory.MaxAuditTracked {
		t.Errorf("kept %d callers, want %d", got, inventory.MaxAuditTracked)
	}
	s, c := r.agg.Section(), r.agg.Capability()
	validate(t, s)
	listed := inventory.MaxAuditCallers
	folded := inventory.MaxAuditTracked - listed
	want := []inventory.AuditOmitted{{
		Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas",
		Callers: int64(folded), Calls: n - int64(listed), RemovedRelease: "1.32", LastSeen: "2026-12-01T10:00:00Z",
	}}
	if s.DeprecatedRequests != n || len(s.Callers) != listed || !reflect.DeepEqual(s.Omitted, want) {
		t.Errorf("%d deprecated, %d callers listed, omitted %+v; want %d, %d, %+v", s.DeprecatedRequests, len(s.Callers), s.Omitted, n, listed, want)
	}
	wantReason := fmt.Sprintf("%d call(s) by callers past the %d tracked counted only per API", n-inventory.MaxAuditTracked, inventory.MaxAuditTracked)
	if !c.Available || !c.Partial || c.Reason != wantReason {
		t.Errorf("capability = %+v, want partial: %s", c, wantReason)
	}
}

// The reviewer's log: thousands of distinct callers whose user and user agent are 150 KB
// each. What is kept is their cut strings, not the records' fields they were cut from.
func TestThousandsOfCallersWithHugeFieldsKeepOnlyTheirCutStrings(t *testing.T) {
	const callers, field = 3000, 150_000
	api := &ObjectReference{APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1beta3", Resource: "flowschemas"}
	perCaller := len(api.APIGroup) + len(api.APIVersion) + len(api.Resource) + len("list") + 2*maxIdentity + len("1.32")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	a := NewAggregator(since)
	for i := range callers {
		// Each event's strings are its own, as a decoded record's are.
		a.Add(&Event{Stage: "ResponseComplete", Verb: "list", ObjectRef: api, StageTimestamp: "2026-12-01T10:00:00Z",
			User:        UserInfo{Username: strconv.Itoa(i) + strings.Repeat("u", field)},
			UserAgent:   strconv.Itoa(i) + strings.Repeat("a", field),
			Annotations: map[string]string{AnnotationDeprecated: "true", AnnotationRemovedRelease: "1.32"}})
	}
	if len(a.callers) != callers || a.kept > callers*perCaller {
		t.Errorf("kept %d bytes in %d callers, want %d callers within %d bytes each", a.kept, len(a.callers), callers, perCaller)
	}
	// The fields themselves are 900 MB; their cut strings 6 MB.
	if grown := int64(heap()) - int64(before); grown > 64<<20 {
		t.Errorf("the heap grew by %d MB holding %d callers, want the cut strings alone kept", grown>>20, callers)
	}
	runtime.KeepAlive(a)
	validate(t, a.Section())
}

func TestTheKeptStringsStayWithinTheirBudget(t *testing.T) {
	a := NewAggregator(since)
	agent := strings.Repeat("x", maxIdentity)
	// Distinct APIs and callers that, at their longest, pass maxKeptBytes before
	// MaxAuditTracked: the group is a 253-character subdomain.
	group := strings.Repeat(strings.Repeat("g", 63)+".", 3) + strings.Repeat("g", 61)
	for i := range inventory.MaxAuditTracked {
		a.Add(&Event{Stage: "ResponseComplete", UserAgent: strconv.Itoa(i) + agent, User: UserInfo{Username: agent + strconv.Itoa(i)},
			ObjectRef:      &ObjectReference{APIGroup: group, APIVersion: "v1", Resource: "r" + strconv.Itoa(i) + strings.Repeat("r", 55)},
			StageTimestamp: "2026-12-01T10:00:00Z", Annotations: map[string]string{AnnotationDeprecated: "true"}})
	}
	if a.kept > maxKeptBytes {
		t.Errorf("kept %d bytes in %d callers (%d calls untracked), want at most %d bytes", a.kept, len(a.callers), a.untracked, maxKeptBytes)
	}
	validate(t, a.Section())
}

func TestADeprecatedRequestToAnAPINoServerWritesIsMalformed(t *testing.T) {
	valid := ObjectReference{APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1beta3", Resource: "flowschemas"}
	with := func(change func(*ObjectReference)) *ObjectReference {
		r := valid
		change(&r)
		return &r
	}
	for _, tt := range []struct {
		name string
		ref  *ObjectReference
		want string // "" is a caller
	}{
		{"flowschemas", &valid, ""},
		{"the core group's pods", with(func(r *ObjectReference) { r.APIGroup, r.APIVersion, r.Resource = "", "v1", "pods" }), ""},
		{"servicecidrs", with(func(r *ObjectReference) { r.APIGroup, r.Resource = "networking.k8s.io", "servicecidrs" }), ""},
		{"a status subresource", with(func(r *ObjectReference) { r.Subresource = "status" }), ""},
		{"a scale subresource", with(func(r *ObjectReference) { r.Subresource = "scale" }), ""},
		{"the approval subresource", with(func(r *ObjectReference) { r.Subresource = "approval" }), ""},
		{"no objectRef", nil, "a request to a deprecated API with no objectRef"},
		{"no version", with(func(r *ObjectReference) { r.APIVersion = "" }), "a request to a deprecated API with no objectRef.apiVersion"},
		{"no resource", with(func(r *ObjectReference) { r.Resource = "" }), "a request to a deprecated API with no objectRef.resource"},
		{"a 100 KB resource", with(func(r *ObjectReference) { r.Resource = "r1-" + strings.Repeat("y", 100_000) }), "objectRef.resource is not a resource name (a DNS label)"},
		{"a 50 KB group", with(func(r *ObjectReference) { r.APIGroup = "g1-" + strings.Repeat("z", 50_000) }), "objectRef.apiGroup is not an API group (a DNS subdomain)"},
		{"a group with a space", with(func(r *ObjectReference) { r.APIGroup = "a b" }), "objectRef.apiGroup is not an API group (a DNS subdomain)"},
		{"a version with a slash", with(func(r *ObjectReference) { r.APIVersion = "v1/x" }), "objectRef.apiVersion is not an API version (a DNS label)"},
		{"a resource in capitals", with(func(r *ObjectReference) { r.Resource = "FlowSchemas" }), "objectRef.resource is not a resource name (a DNS label)"},
		{"a subresource with a dot", with(func(r *ObjectReference) { r.Subresource = "sta.tus" }), "objectRef.subresource is not a subresource name (a DNS label)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAggregator(since)
			a.Add(&Event{Stage: "ResponseComplete", Verb: "list", UserAgent: "a/1", ObjectRef: tt.ref, StageTimestamp: "2026-12-01T10:00:00Z",
				Annotations: map[string]string{AnnotationDeprecated: "true"}})
			s := a.Section()
			validate(t, s)
			if tt.want == "" {
				if len(s.Callers) != 1 || s.Malformed != 0 {
					t.Errorf("callers %+v, malformed %v; want one caller", s.Callers, s.MalformedAt)
				}
				return
			}
			if len(s.Callers) != 0 || s.Events != 0 || s.DeprecatedRequests != 0 || !reflect.DeepEqual(s.MalformedAt, []string{tt.want}) {
				t.Errorf("callers %+v, events %d, deprecated %d, malformed %v; want none counted, malformed: %s",
					s.Callers, s.Events, s.DeprecatedRequests, s.MalformedAt, tt.want)
			}
		})
	}
}

func TestUpgradescopesOwnReadsAreCountedButAreNoCaller(t *testing.T) {
	own := cluster.UserAgent("v0.4.1")
	var calls []call
	for _, verb := range []string{"get", "list", "watch"} {
		c := fsList(own)
		c.verb = verb
		calls = append(calls, c)
	}
	write := fsList(own)
	write.verb = "create"
	renamed := fsList("us/v0.0.0 (linux/amd64) kubernetes/$Format")
	s, _ := stdin(t, lines(t, append(calls, write, renamed)...))
	var agents []string
	for _, c := range s.Callers {
		agents = append(agents, c.Verb+" "+c.UserAgent)
	}
	want := []string{"create " + own, "list us/v0.0.0 (linux/amd64) kubernetes/$Format"}
	if s.OwnReads != 3 || s.DeprecatedRequests != 5 || !reflect.DeepEqual(agents, want) {
		t.Errorf("own reads %d of %d deprecated, callers %q; want 3 of 5, callers %q", s.OwnReads, s.DeprecatedRequests, agents, want)
	}
	a := NewAggregator(since)
	for _, c := range calls {
		a.Add(c.eventForAdd(t))
	}
	if got := ResumeState(a.State(), since).Section().OwnReads; got != 3 {
		t.Errorf("resumed own reads %d, want 3", got)
	}
}

func TestTheRemovedReleaseIsKeptAsMajorMinor(t *testing.T) {
	for _, tt := range []struct {
		given []string
		want  string
	}{
		{[]string{"v1.22"}, "1.22"},
		{[]string{"1.37.0"}, "1.37"},
		{[]string{"soon"}, ""},
		{[]string{"1.22", "1.9"}, "1.9"},
		{[]string{"1.9", "v1.22.3"}, "1.9"},
	} {
		var calls []call
		for _, r := range tt.given {
			c := fsList("a/1")
			c.removed = r
			calls = append(calls, c)
		}
		s, _ := stdin(t, lines(t, calls...))
		if got := s.Callers[0].RemovedRelease; got != tt.want {
			t.Errorf("%q: removed release %q, want %q", tt.given, got, tt.want)
		}
	}
}

func TestTheSectionListsTheBusiestCallersAndFoldsTheRestIntoTheirAPI(t *testing.T) {
	a := NewAggregator(since)
	add := func(agent, resource string, times int) {
		for range times {
			a.Add(&Event{Stage: "ResponseComplete", Verb: "list", UserAgent: agent, StageTimestamp: "2026-12-01T10:00:00Z",
				ObjectRef:   &ObjectReference{APIGroup: "g", APIVersion: "v1beta1", Resource: resource},
				Annotations: map[string]string{AnnotationDeprecated: "true"}})
		}
	}
	for i := range inventory.MaxAuditCallers {
		add(fmt.Sprintf("busy-%04d", i), "things", 3)
	}
	add("quiet-1", "things", 1)
	add("quiet-2", "things", 2)
	add("quiet-3", "others", 1)
	s := a.Section()
	if len(s.Callers) != inventory.MaxAuditCallers || s.Callers[0].UserAgent != "busy-0000" || s.Callers[len(s.Callers)-1].UserAgent != "busy-0999" {
		t.Errorf("callers from %s to %s, want busy-0000 to busy-0999", s.Callers[0].UserAgent, s.Callers[len(s.Callers)-1].UserAgent)
	}
	want := []inventory.AuditOmitted{
		{Group: "g", Version: "v1beta1", Resource: "others", Callers: 1, Calls: 1, LastSeen: "2026-12-01T10:00:00Z"},
		{Group: "g", Version: "v1beta1", Resource: "things", Callers: 2, Calls: 3, LastSeen: "2026-12-01T10:00:00Z"},
	}
	if !reflect.DeepEqual(s.Omitted, want) {
		t.Errorf("omitted = %+v, want %+v", s.Omitted, want)
	}
	if again := a.Section(); !reflect.DeepEqual(again, s) {
		t.Error("a second Section differs from the first: Section changed the aggregation")
	}
}

func TestOmittedRowsPastTheirBoundCountTheirCalls(t *testing.T) {
	a := NewAggregator(since)
	for i := range inventory.MaxAuditTracked + inventory.MaxAuditAPIs + 7 {
		a.Add(&Event{Stage: "ResponseComplete", Verb: "list", UserAgent: "a", StageTimestamp: "2026-12-01T10:00:00Z",
			ObjectRef:   &ObjectReference{APIGroup: "g", APIVersion: "v1beta1", Resource: fmt.Sprintf("r%05d", i)},
			Annotations: map[string]string{AnnotationDeprecated: "true"}})
	}
	s := a.Section()
	validate(t, s)
	var calls int64
	for _, c := range s.Callers {
		calls += c.Count
	}
	for _, o := range s.Omitted {
		calls += o.Calls
	}
	if len(s.Omitted) != inventory.MaxAuditAPIs || s.OmittedAPIs == 0 || calls+s.OmittedAPIs != s.DeprecatedRequests {
		t.Errorf("%d omitted rows, %d calls at APIs past them, %d calls in all; want %d rows and every one of %d calls counted once",
			len(s.Omitted), s.OmittedAPIs, calls+s.OmittedAPIs, inventory.MaxAuditAPIs, s.DeprecatedRequests)
	}
}

// resumed is a's state as the server keeps it between batches: through its JSON.
func resumed(t *testing.T, a *Aggregator) *Aggregator {
	t.Helper()
	data, err := json.Marshal(a.State())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return ResumeState(&st, since)
}

func TestCountingAcrossResumedBatchesIsCountingThemAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		callers int
	}{
		{"a few callers", 3},
		{"callers past those listed, calling again in the next batch", inventory.MaxAuditCallers + 200},
		{"callers past those tracked, calling again in the next batch", inventory.MaxAuditTracked + 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			batch := make([]*Event, tt.callers)
			for i := range batch {
				c := fsList(fmt.Sprintf("agent-%d", i))
				c.ips = []string{fmt.Sprintf("10.0.%d.1", i%300)}
				batch[i] = c.eventForAdd(t)
			}
			once, batches := NewAggregator(since), NewAggregator(since)
			for range 3 {
				for _, e := range batch {
					once.Add(e)
					batches.Add(e)
				}
				batches = resumed(t, batches)
			}
			if got, want := batches.Section(), once.Section(); !reflect.DeepEqual(got, want) {
				t.Errorf("the section of three resumed batches differs from reading them at once:\ngot  %+v\nwant %+v", summary(got), summary(want))
			}
			if got, want := batches.Capability(), once.Capability(); !reflect.DeepEqual(got, want) {
				t.Errorf("capability %+v, want %+v", got, want)
			}
			s := batches.Section()
			var folded int64
			for _, o := range s.Omitted {
				folded += o.Callers
			}
			if want := int64(max(0, min(tt.callers, inventory.MaxAuditTracked)-inventory.MaxAuditCallers)); folded != want {
				t.Errorf("omitted rows count %d callers, want %d: each caller past those listed once", folded, want)
			}
		})
	}
}

// summary is what tells two sections apart without printing thousands of callers.
func summary(s *inventory.AuditCalls) string {
	return fmt.Sprintf("events %d, deprecated %d, %d callers, omitted %+v, omittedApis %d", s.Events, s.DeprecatedRequests, len(s.Callers), s.Omitted, s.OmittedAPIs)
}

func TestResumingAStateGivesBackItsSectionAndCapability(t *testing.T) {
	r := newReader(context.Background(), NewAggregator(since), &distinctAgents{n: inventory.MaxAuditTracked + 500})
	if err := r.readPath("-"); err != nil {
		t.Fatal(err)
	}
	r.agg.countMalformed("-:3", "not JSON")
	for _, tt := range []struct {
		name string
		a    *Aggregator
	}{
		{"a state with untracked callers, omitted rows and malformed lines", r.agg},
		{"an empty state", NewAggregator(since)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			again := resumed(t, tt.a)
			if got, want := again.Section(), tt.a.Section(); !reflect.DeepEqual(got, want) {
				t.Errorf("the resumed section differs:\ngot  %+v\nwant %+v", summary(got), summary(want))
			}
			if got, want := again.Capability(), tt.a.Capability(); !reflect.DeepEqual(got, want) {
				t.Errorf("the resumed capability is %+v, want %+v", got, want)
			}
		})
	}
	if c := r.agg.Capability(); !c.Partial || !strings.Contains(c.Reason, "counted only per API") || !strings.Contains(c.Reason, "malformed") {
		t.Errorf("capability %+v, want partial naming the malformed records and the untracked callers", c)
	}
}

func TestResumeStateContinuesCountingTheSameCallers(t *testing.T) {
	a := NewAggregator(since)
	a.Add(fsList("a/1").eventForAdd(t))
	later := fsList("a/1")
	later.at = "2026-12-05T00:00:00Z"
	a = resumed(t, a)
	a.Add(later.eventForAdd(t))
	s := a.Section()
	if len(s.Callers) != 1 || s.Callers[0].Count != 2 || s.Callers[0].LastSeen != "2026-12-05T00:00:00Z" || s.Events != 2 {
		t.Errorf("callers %+v, events %d; want one caller seen twice", s.Callers, s.Events)
	}
}

func TestTheSectionDoesNotDependOnTheOrderOfFiles(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 4 {
		var calls []call
		for j := range 20 {
			c := fsList(fmt.Sprintf("agent-%d", (i*7+j)%9))
			c.at = fmt.Sprintf("2026-12-0%dT10:%02d:00Z", 1+i, j)
			c.ips = []string{fmt.Sprintf("10.%d.%d.1", i, j%3)}
			if j%4 == 0 {
				c.agent = "kubectl/v1.3" + strconv.Itoa(j%3) + ".0 (linux/amd64)"
			}
			calls = append(calls, c)
		}
		files = append(files, write(t, dir, fmt.Sprintf("f%d.log", i), []byte(lines(t, calls...))))
	}
	forward, _ := collect(t, "", files...)
	backward, _ := collect(t, "", files[3], files[2], files[1], files[0])
	forward.Sources, backward.Sources = nil, nil
	if !reflect.DeepEqual(forward, backward) {
		t.Errorf("the section depends on the order of the files:\n%+v\n%+v", forward, backward)
	}
}

func TestSourcesPastTheBoundAreCounted(t *testing.T) {
	dir := t.TempDir()
	line := []byte(lines(t, fsList("a/1")))
	for i := range inventory.MaxAuditSources + 2 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("audit-%05d.log", i)), line, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := collect(t, "", dir)
	if len(s.Sources) != inventory.MaxAuditSources || s.SourcesOmitted != 2 || s.Events != int64(inventory.MaxAuditSources+2) {
		t.Errorf("%d sources listed, %d omitted, %d events; want %d, 2, all", len(s.Sources), s.SourcesOmitted, s.Events, inventory.MaxAuditSources)
	}
}

func TestOnlyTheFirstMalformedRecordsAreNamed(t *testing.T) {
	s, c := stdin(t, strings.Repeat("not json\n", 15)+lines(t, fsList("a/1")))
	if s.Malformed != 15 || len(s.MalformedAt) != inventory.MaxAuditMalformed || s.MalformedAt[9] != "-:10: not JSON" || s.Sources[0].Malformed != 15 {
		t.Errorf("malformed %d, named %v; want 15 counted, the first %d named", s.Malformed, s.MalformedAt, inventory.MaxAuditMalformed)
	}
	if want := "15 malformed record(s) skipped (first: -:1: not JSON)"; c.Reason != want {
		t.Errorf("reason = %q, want %q", c.Reason, want)
	}
}
