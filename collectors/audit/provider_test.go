package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The requests the samples in testdata/providers record, as each provider gives them.
const (
	exporter            = "system:serviceaccount:monitoring:flow-exporter"
	exporterAgent       = "flow-exporter/v0.9.2 (linux/amd64) kubernetes/4b1d2c3"
	kubectlAgent        = "kubectl/v1.31.2 (linux/amd64) kubernetes/5864a46"
	exporterRBAC        = `RBAC: allowed by ClusterRoleBinding "flow-exporter" of ClusterRole "flow-exporter" to ServiceAccount "flow-exporter/monitoring"`
	listedAt            = "2026-11-20T09:15:02.121907Z"
	podsListedAt        = "2026-11-20T09:16:40.509871Z"
	patchedAt           = "2026-11-20T09:20:11.412604Z"
	deploymentCreatedAt = "2026-11-20T09:21:30.031455Z"
)

func flowSchemas() *ObjectReference {
	return &ObjectReference{Resource: "flowschemas", APIGroup: "flowcontrol.apiserver.k8s.io", APIVersion: "v1beta3"}
}

func deprecatedAnnotations() map[string]string {
	return map[string]string{
		"authorization.k8s.io/decision": "allow",
		"authorization.k8s.io/reason":   exporterRBAC,
		AnnotationDeprecated:            "true",
		AnnotationRemovedRelease:        "1.32",
	}
}

func allowed() map[string]string {
	return map[string]string{"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
}

// deprecatedList is the flow exporter listing FlowSchemas at a version 1.32 removes.
func deprecatedList(ip string) Event {
	return Event{Stage: "ResponseComplete", Verb: "list", User: UserInfo{Username: exporter},
		SourceIPs: []string{ip}, UserAgent: exporterAgent, ObjectRef: flowSchemas(),
		StageTimestamp: listedAt, Annotations: deprecatedAnnotations()}
}

// deprecatedPatch is the flow exporter patching a FlowSchema at that version.
func deprecatedPatch(ip string) Event {
	e := deprecatedList(ip)
	e.Verb, e.StageTimestamp = "patch", patchedAt
	return e
}

// podsListed is kubectl listing pods: no deprecated API.
func podsListed(user string) Event {
	return Event{Stage: "ResponseComplete", Verb: "list", User: UserInfo{Username: user},
		SourceIPs: []string{"203.0.113.7"}, UserAgent: kubectlAgent,
		ObjectRef:      &ObjectReference{Resource: "pods", APIVersion: "v1"},
		StageTimestamp: podsListedAt, Annotations: allowed()}
}

// deploymentMade is kubectl creating a Deployment: no deprecated API.
func deploymentMade(user, ip string) Event {
	return Event{Stage: "ResponseComplete", Verb: "create", User: UserInfo{Username: user},
		SourceIPs: []string{ip}, UserAgent: kubectlAgent,
		ObjectRef:      &ObjectReference{Resource: "deployments", APIGroup: "apps", APIVersion: "v1"},
		StageTimestamp: deploymentCreatedAt, Annotations: allowed()}
}

// noStage is e as a provider that gives no stage has it.
func noStage(e Event) Event {
	e.Stage = ""
	return e
}

func TestProviderReadsEachDocumentedSample(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample string
		format string
		want   []Event
		err    error
	}{
		{"filter-log-events skips the group's other streams", "eks-filter-log-events.json", formatCloudWatch,
			[]Event{deprecatedList("10.0.12.34"), podsListed("kubernetes-admin")}, nil},
		{"get-log-events reads each message", "eks-get-log-events.json", formatCloudWatch,
			[]Event{deprecatedList("10.0.12.34"), podsListed("kubernetes-admin")}, nil},
		{"a subscription's control message holds no event", "eks-subscription.jsonl", formatCloudWatchSubscription,
			[]Event{deprecatedList("10.0.12.34"), podsListed("kubernetes-admin")}, nil},
		{"Logs Insights results read each row's @message", "eks-logs-insights.json", formatLogsInsights,
			[]Event{podsListed("kubernetes-admin"), deprecatedList("10.0.12.34")}, nil},
		{"an upgrade insight's counts are refused until they can be added", "eks-describe-insight.json", formatEKSInsight,
			nil, errInsightCounts},
		{"gcloud logging read gives GKE's entries without a stage", "gke-logging-read.json", formatGKE,
			[]Event{noStage(deprecatedList("10.128.0.34")), noStage(deprecatedPatch("10.128.0.34")),
				noStage(deploymentMade("jane@example.com", "203.0.113.7"))}, nil},
		{"a storage sink's cluster operation is no API request", "gke-storage-sink.jsonl", formatGKE,
			[]Event{noStage(deprecatedList("10.128.0.34")), noStage(deprecatedPatch("10.128.0.34")),
				noStage(deploymentMade("jane@example.com", "203.0.113.7"))}, nil},
		{"a storage account's kube-apiserver records are skipped", "aks-storage.jsonl", formatAKSDiagnostics,
			[]Event{deprecatedList("10.224.0.34"), podsListed("masterclient")}, nil},
		{"an event hub's records read like the storage account's", "aks-event-hubs.json", formatAKSDiagnostics,
			[]Event{deprecatedPatch("10.224.0.34"), deploymentMade("masterclient", "198.51.100.23")}, nil},
		{"AKSAuditAdmin rows read column by column", "aks-log-analytics.json", formatAKSLogAnalytics,
			[]Event{deprecatedPatch("10.224.0.34"), deploymentMade("masterclient", "198.51.100.23")}, nil},
		{"the query API's tables read row by row", "aks-log-analytics-api.json", formatAKSLogAnalytics,
			[]Event{deprecatedList("10.224.0.34"), podsListed("masterclient")}, nil},
		{"AzureDiagnostics rows read their log_s", "aks-azure-diagnostics.json", formatAKSAzureDiagnostics,
			[]Event{deprecatedPatch("10.224.0.34"), deploymentMade("masterclient", "198.51.100.23")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Event
			for i, rec := range sampleRecords(t, tc.sample) {
				format, err := provider(rec, func(e *Event) { got = append(got, *e) })
				if format != tc.format {
					t.Errorf("record %d: format %q, want %q", i, format, tc.format)
				}
				if !errors.Is(err, tc.err) {
					t.Errorf("record %d: error %v, want %v", i, err, tc.err)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events:\n got %s\nwant %s", asJSON(got), asJSON(tc.want))
			}
		})
	}
}

// TestEachSampleRecordHasOneShape checks that shapes are told apart by their own keys: no
// record of the samples is claimed by two shapes, whatever their order.
func TestEachSampleRecordHasOneShape(t *testing.T) {
	samples, err := filepath.Glob(filepath.Join("testdata", "providers", "*.json*"))
	if err != nil || len(samples) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, path := range samples {
		for i, raw := range sampleRecords(t, filepath.Base(path)) {
			var rec object
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatalf("%s record %d: %v", filepath.Base(path), i, err)
			}
			var claims []string
			for _, s := range shapes {
				if s.match(rec) {
					claims = append(claims, s.format)
				}
			}
			if len(claims) != 1 {
				t.Errorf("%s record %d is claimed by %v, want one shape", filepath.Base(path), i, claims)
			}
		}
	}
}

func TestProviderLeavesOtherRecordsToTheReader(t *testing.T) {
	for _, tc := range []struct{ name, record string }{
		{"an upstream event line", `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"list","user":{"username":"u"},"sourceIPs":["10.0.0.1"],"userAgent":"a","stageTimestamp":"2026-11-20T09:15:02.121907Z"}`},
		{"an upstream event list", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[]}`},
		{"an empty object", `{}`},
		{"an empty array", `[]`},
		{"an array of numbers", `[1, 2]`},
		{"a row of Logs Insights results alone", `[{"field":"@message","value":"{}"}]`},
		{"null", `null`},
		{"a string", `"message"`},
		{"text", `I1120 09:15:03.121907 11 controller.go:615] quota admission`},
		{"broken JSON", `{"message":`},
		{"nothing", ``},
		{"a message without a numeric timestamp", `{"message":"{}","timestamp":"2026-11-20T09:15:02Z"}`},
		{"a LogEntry without its resource", `{"logName":"projects/p/logs/x","protoPayload":{}}`},
		{"a resource log without properties", `{"resourceId":"/SUBSCRIPTIONS/x","category":"kube-audit"}`},
		{"a table row of another table", `{"Type":"ContainerLogV2","Verb":"list","AuditId":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emitted := 0
			format, err := provider([]byte(tc.record), func(*Event) { emitted++ })
			if !errors.Is(err, errNotProvider) || format != "" || emitted != 0 {
				t.Errorf("got format %q, error %v, %d events; want errNotProvider and nothing else", format, err, emitted)
			}
		})
	}
}

func TestProviderSkipsRecordsThatHoldNoAuditEvent(t *testing.T) {
	for _, tc := range []struct{ name, record, format string }{
		{"a CloudWatch event of the api stream", `{"logStreamName":"kube-apiserver-0a1b","timestamp":1,"message":"I1120 text"}`, formatCloudWatch},
		{"a subscription payload of the authenticator stream", `{"messageType":"DATA_MESSAGE","logStream":"authenticator-0a1b","logEvents":[{"message":"text"}]}`, formatCloudWatchSubscription},
		{"a subscription control message", `{"messageType":"CONTROL_MESSAGE","logEvents":[{"message":"CWL CONTROL MESSAGE: Checking health of destination Firehose."}]}`, formatCloudWatchSubscription},
		{"a Logs Insights row of another stream", `{"status":"Complete","results":[[{"field":"@logStream","value":"kube-scheduler-0a1b"},{"field":"@message","value":"text"}]]}`, formatLogsInsights},
		{"a passing insight", `{"insight":{"category":"UPGRADE_READINESS","categorySpecificSummary":{"deprecationDetails":[{"usage":"/apis/policy/v1beta1/podsecuritypolicies","clientStats":[]}]}}}`, formatEKSInsight},
		{"an insight of another category", `{"insight":{"category":"MISCONFIGURATION"}}`, formatEKSInsight},
		{"a container's log entry", `{"logName":"projects/p/logs/stdout","resource":{"type":"k8s_container"},"textPayload":"hello"}`, formatGKE},
		{"another service's audit entry", `{"logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","resource":{"type":"gke_cluster"},"protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","serviceName":"container.googleapis.com","methodName":"google.container.v1.ClusterManager.UpdateCluster"}}`, formatGKE},
		{"a guard record", `{"resourceId":"/SUBSCRIPTIONS/x","category":"guard","properties":{"log":"text"}}`, formatAKSDiagnostics},
		{"an AzureDiagnostics kube-scheduler row", `{"Category":"kube-scheduler","log_s":"text"}`, formatAKSAzureDiagnostics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emitted := 0
			format, err := provider([]byte(tc.record), func(*Event) { emitted++ })
			if err != nil || format != tc.format || emitted != 0 {
				t.Errorf("got format %q, error %v, %d events; want %q, no error, no event", format, err, emitted, tc.format)
			}
		})
	}
}

// secret stands for whatever a record holds: no error may repeat it.
const secret = "s3cr3t-Zq9"

func TestProviderRefusesMalformedRecordsWithoutQuotingThem(t *testing.T) {
	event := func(fields string) string {
		b, _ := json.Marshal(`{"kind":"Event","apiVersion":"audit.k8s.io/v1",` + fields + `}`)
		return string(b)
	}
	for _, tc := range []struct {
		name, record, format, err string
		events                    int
	}{
		{"a message that is text", `{"timestamp":1,"message":"` + secret + `"}`,
			formatCloudWatch, "message: not an audit event: invalid JSON at byte 0", 0},
		{"a message of another kind", `{"timestamp":1,"message":` + mustJSON(`{"kind":"`+secret+`"}`) + `}`,
			formatCloudWatch, "not an audit event: no kind Event", 0},
		{"a message whose verb is a number", `{"timestamp":1,"message":` + event(`"verb":1e999`) + `}`,
			formatCloudWatch, "verb is a JSON number, not string", 0},
		{"an unknown messageType", `{"messageType":"` + secret + `","logEvents":[]}`,
			formatCloudWatchSubscription, "neither DATA_MESSAGE nor CONTROL_MESSAGE", 0},
		{"logEvents that are no array", `{"messageType":"DATA_MESSAGE","logEvents":"` + secret + `"}`,
			formatCloudWatchSubscription, "logEvents: a JSON string where", 0},
		{"one bad message of three", `{"messageType":"DATA_MESSAGE","logEvents":[{"message":` + event(`"verb":"list"`) + `},{"message":"` + secret + `"},{"message":"` + secret + `"}]}`,
			formatCloudWatchSubscription, "logEvents[1].message: not an audit event: invalid JSON at byte 0 (and 1 more of 3)", 1},
		{"a query still running", `{"status":"Running","results":[[{"field":"@message","value":` + event(`"verb":"list"`) + `}]]}`,
			formatLogsInsights, "results are partial", 0},
		{"a row without @message", `{"status":"Complete","results":[[{"field":"@timestamp","value":"` + secret + `"}]]}`,
			formatLogsInsights, "results[0]: no @message field", 0},
		{"a usage that is no API path", `{"insight":{"category":"UPGRADE_READINESS","categorySpecificSummary":{"deprecationDetails":[{"usage":"` + secret + `","clientStats":[{"userAgent":"a"}]}]}}}`,
			formatEKSInsight, "deprecationDetails[0].usage is not an API path", 0},
		{"a lastRequestTime that is no time", `{"insight":{"category":"UPGRADE_READINESS","categorySpecificSummary":{"deprecationDetails":[{"usage":"/api/v1/pods","clientStats":[{"lastRequestTime":"` + secret + `"}]}]}}}`,
			formatEKSInsight, "lastRequestTime is not an RFC 3339 time", 0},
		{"a protoPayload that is text", `{"logName":"l","resource":{},"protoPayload":"` + secret + `"}`,
			formatGKE, "protoPayload is not an object", 0},
		{"a Kubernetes entry without a method", gkeEntry(`"methodName":"`+secret+`"`, `"timestamp":"2026-11-20T09:15:02Z"`),
			formatGKE, "protoPayload.methodName names no verb", 0},
		{"a Kubernetes entry's bad timestamp", gkeEntry(`"methodName":"io.k8s.core.v1.pods.list"`, `"timestamp":"`+secret+`"`),
			formatGKE, "timestamp is not an RFC 3339 time", 0},
		{"labels that are no strings", gkeEntry(`"methodName":"io.k8s.core.v1.pods.list"`, `"timestamp":"2026-11-20T09:15:02Z","labels":{"`+secret+`":5}`),
			formatGKE, "labels: a JSON number where string was expected", 0},
		{"a kube-audit record without its log", `{"resourceId":"r","category":"kube-audit","properties":{"` + secret + `":1}}`,
			formatAKSDiagnostics, "properties.log is not the audit event's text", 0},
		{"a kube-audit record whose log is text", `{"resourceId":"r","category":"kube-audit-admin","properties":{"log":"` + secret + `"}}`,
			formatAKSDiagnostics, "properties.log: not an audit event", 0},
		{"a row whose User is broken", `{"Type":"AKSAudit","Verb":"list","User":"{` + secret + `"}`,
			formatAKSLogAnalytics, "User: invalid JSON at byte 1", 0},
		{"a row whose time is no time", `{"AuditId":"a","Verb":"list","StageReceivedTime":"` + secret + `"}`,
			formatAKSLogAnalytics, "StageReceivedTime is not an RFC 3339 time", 0},
		{"a row of fewer values than columns", `{"tables":[{"columns":[{"name":"AuditId"},{"name":"Verb"}],"rows":[["` + secret + `"]]}]}`,
			formatAKSLogAnalytics, "tables[0].rows[0] has 1 values for 2 columns", 0},
		{"a row of another table", `{"tables":[{"columns":[{"name":"Computer"}],"rows":[["` + secret + `"]]}]}`,
			formatAKSLogAnalytics, "is no AKSAudit, AKSAuditAdmin or AzureDiagnostics row", 0},
		{"an answer with a partial error", `{"tables":[],"error":{"code":"PartialError","message":"` + secret + `"}}`,
			formatAKSLogAnalytics, "results are partial", 0},
		{"an AzureDiagnostics row whose log_s is text", `{"Category":"kube-audit","log_s":"` + secret + `"}`,
			formatAKSAzureDiagnostics, "log_s: not an audit event", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emitted := 0
			format, err := provider([]byte(tc.record), func(*Event) { emitted++ })
			if err == nil || errors.Is(err, errNotProvider) {
				t.Fatalf("error %v, want a malformed %s record", err, tc.format)
			}
			if format != tc.format || emitted != tc.events {
				t.Errorf("format %q with %d events, want %q with %d", format, emitted, tc.format, tc.events)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q, want it to say %q", err, tc.err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "1e999") {
				t.Errorf("error %q quotes the record", err)
			}
		})
	}
}

func gkeEntry(payload, entry string) string {
	return `{"logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","resource":{"type":"k8s_cluster"},` + entry +
		`,"protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","serviceName":"k8s.io",` + payload + `}}`
}

func TestResourceNamesReadAsTheAPIServerReadsPaths(t *testing.T) {
	ref := func(group, version, resource, sub string) *ObjectReference {
		return &ObjectReference{APIGroup: group, APIVersion: version, Resource: resource, Subresource: sub}
	}
	for _, tc := range []struct {
		name string
		got  *ObjectReference
		want *ObjectReference
	}{
		{"a core object", objectRefFromResourceName("core/v1/namespaces/default/pods/web"), ref("", "v1", "pods", "")},
		{"a core subresource", objectRefFromResourceName("core/v1/namespaces/default/pods/web/eviction"), ref("", "v1", "pods", "eviction")},
		{"a list in a namespace", objectRefFromResourceName("networking.k8s.io/v1beta1/namespaces/shop/ingresses"), ref("networking.k8s.io", "v1beta1", "ingresses", "")},
		{"a list across namespaces", objectRefFromResourceName("apps/v1/deployments"), ref("apps", "v1", "deployments", "")},
		{"a cluster-scoped object", objectRefFromResourceName("flowcontrol.apiserver.k8s.io/v1beta3/flowschemas/batch-jobs"), ref("flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", "")},
		{"a namespace", objectRefFromResourceName("core/v1/namespaces/shop"), ref("", "v1", "namespaces", "")},
		{"a namespace's status", objectRefFromResourceName("core/v1/namespaces/shop/status"), ref("", "v1", "namespaces", "status")},
		{"a namespace's finalize", objectRefFromResourceName("core/v1/namespaces/shop/finalize"), ref("", "v1", "namespaces", "finalize")},
		{"a custom resource's scale", objectRefFromResourceName("example.com/v1/namespaces/a/widgets/w/scale"), ref("example.com", "v1", "widgets", "scale")},
		{"a non-resource request", objectRefFromResourceName("healthz"), nil},
		{"a path without a resource", objectRefFromResourceName("apps/v1/"), nil},
		{"a core API path", objectRefFromPath("/api/v1/componentstatuses"), ref("", "v1", "componentstatuses", "")},
		{"a group API path", objectRefFromPath("/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas"), ref("flowcontrol.apiserver.k8s.io", "v1beta2", "flowschemas", "")},
		{"a path that is no API", objectRefFromPath("/healthz"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

func TestInsightCallersKeepEachUserAgentsCount(t *testing.T) {
	read := func(t *testing.T, doc string) []insightCaller {
		var rec object
		if err := json.Unmarshal([]byte(doc), &rec); err != nil {
			t.Fatal(err)
		}
		callers, err := eksInsightCallers(rec)
		if err != nil {
			t.Fatal(err)
		}
		return callers
	}
	sample := sampleRecords(t, "eks-describe-insight.json")
	want := []insightCaller{{
		Event: Event{UserAgent: exporterAgent, ObjectRef: flowSchemas(), StageTimestamp: "2026-11-20T09:15:02.000000Z",
			Annotations: map[string]string{AnnotationDeprecated: "true", AnnotationRemovedRelease: "1.32"}},
		Requests: 4310,
	}}
	if got := read(t, string(sample[0])); !reflect.DeepEqual(got, want) {
		t.Errorf("describe-insight sample:\n got %s\nwant %s", asJSON(got), asJSON(want))
	}
	// AWS CLI v2 prints timestamps as ISO 8601 text by default.
	iso := strings.Replace(string(sample[0]), `"lastRequestTime": 1795166102.0`, `"lastRequestTime": "2026-11-20T10:15:02.25+01:00"`, 1)
	want[0].Event.StageTimestamp = "2026-11-20T09:15:02.250000Z"
	if got := read(t, iso); !reflect.DeepEqual(got, want) {
		t.Errorf("with ISO 8601 times:\n got %s\nwant %s", asJSON(got), asJSON(want))
	}
}

func TestProviderTimesAreRFC3339WithMicrosecondsInUTC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-11-20T09:15:02.121907Z", "2026-11-20T09:15:02.121907Z"},
		{"2026-11-20T09:15:02.1219070Z", "2026-11-20T09:15:02.121907Z"},
		{"2026-11-20T09:15:02.121907391Z", "2026-11-20T09:15:02.121907Z"},
		{"2026-11-20T09:15:02Z", "2026-11-20T09:15:02.000000Z"},
		{"2026-11-20T10:15:02.5+01:00", "2026-11-20T09:15:02.500000Z"},
	} {
		if got, err := stageTime(tc.in); err != nil || got != tc.want {
			t.Errorf("stageTime(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, n := range []struct{ in, want string }{
		{"1795166102", "2026-11-20T09:15:02.000000Z"},
		{"1795166102.121907391", "2026-11-20T09:15:02.121907Z"},
	} {
		if got, err := epochSeconds(n.in); err != nil || got != n.want {
			t.Errorf("epochSeconds(%q) = %q, %v; want %q", n.in, got, err, n.want)
		}
	}
}

// sampleRecords splits a sample into records as the reader frames a file: a .jsonl file
// into its lines; a .json document into the elements of its top-level array, or of its
// events, records, items or entries array, or else the document whole.
func sampleRecords(t testing.TB, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "providers", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".jsonl") {
		var recs [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				recs = append(recs, append([]byte(nil), line...))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) == nil {
		return rawRecords(elems)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, key := range []string{"events", "records", "items", "entries"} {
		if json.Unmarshal(doc[key], &elems) == nil && elems != nil {
			return rawRecords(elems)
		}
	}
	return [][]byte{data}
}

func rawRecords(elems []json.RawMessage) [][]byte {
	recs := make([][]byte, len(elems))
	for i, e := range elems {
		recs[i] = e
	}
	return recs
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func asJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
