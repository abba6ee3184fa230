package corpus

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// AuditOptions shape an audit log: AuditLog writes at least Size bytes of JSON lines as
// kube-apiserver's log backend writes them, with user agents drawn from Agents distinct
// ones. The same options give the same log.
type AuditOptions struct {
	Size   int64
	Agents int
	Seed   uint64
}

// AuditStats is what a log AuditLog wrote holds, as collectors/audit counts it.
type AuditStats struct {
	Bytes, Events, Requests, Deprecated int64
}

type auditAPI struct {
	group, version, resource, removed string
}

// The APIs the log's requests go to; the deprecated ones carry the release that removes
// them, as the API server annotates them.
var (
	auditAPIs = []auditAPI{
		{"", "v1", "pods", ""}, {"", "v1", "configmaps", ""}, {"", "v1", "secrets", ""},
		{"", "v1", "services", ""}, {"", "v1", "endpoints", ""}, {"", "v1", "nodes", ""},
		{"", "v1", "namespaces", ""}, {"", "v1", "events", ""}, {"apps", "v1", "deployments", ""},
		{"apps", "v1", "replicasets", ""}, {"apps", "v1", "statefulsets", ""}, {"batch", "v1", "jobs", ""},
		{"coordination.k8s.io", "v1", "leases", ""}, {"discovery.k8s.io", "v1", "endpointslices", ""},
		{"networking.k8s.io", "v1", "ingresses", ""}, {"rbac.authorization.k8s.io", "v1", "rolebindings", ""},
		{"authorization.k8s.io", "v1", "subjectaccessreviews", ""}, {"storage.k8s.io", "v1", "csidrivers", ""},
	}
	auditDeprecatedAPIs = []auditAPI{
		{"flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", "1.32"},
		{"flowcontrol.apiserver.k8s.io", "v1beta3", "prioritylevelconfigurations", "1.32"},
		{"policy", "v1beta1", "poddisruptionbudgets", "1.25"},
		{"batch", "v1beta1", "cronjobs", "1.25"},
		{"autoscaling", "v2beta2", "horizontalpodautoscalers", "1.26"},
		{"storage.k8s.io", "v1beta1", "csistoragecapacities", "1.27"},
		{"resource.k8s.io", "v1beta1", "resourceclaims", "1.36"},
	}
	auditVerbs = []string{"get", "get", "get", "list", "list", "watch", "update", "patch", "create", "delete"}
)

// AuditLog writes o.Size bytes (or a line more) of audit events to w: mostly Metadata-level
// events of many resources, one in twenty at RequestResponse level with request and
// response bodies of 1–8 KiB, one in a hundred to a deprecated API with the API server's
// annotations, a tenth of the user agents kubectl's. Watches log ResponseStarted then
// ResponseComplete, as a policy omitting RequestReceived gives.
func AuditLog(w io.Writer, o AuditOptions) (AuditStats, error) {
	g := &auditGen{
		rng:    rand.New(rand.NewPCG(o.Seed, 0x6175646974)),
		agents: max(o.Agents, 1),
		now:    time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	}
	g.body = make([]byte, 8<<10)
	for i := range g.body {
		g.body[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var s AuditStats
	for s.Bytes < o.Size {
		for _, line := range g.request() {
			n, err := bw.Write(line)
			s.Bytes += int64(n)
			if err != nil {
				return s, err
			}
			s.Events++
		}
		s.Requests++
		if g.deprecated {
			s.Deprecated++
		}
	}
	return s, bw.Flush()
}

type auditGen struct {
	rng        *rand.Rand
	agents     int
	now        time.Time
	body       []byte
	lines      [2][]byte
	out        [2][]byte
	deprecated bool
}

// request answers the lines of one request: one, or two for a watch.
func (g *auditGen) request() [][]byte {
	g.now = g.now.Add(time.Duration(g.rng.IntN(2000)) * time.Microsecond)
	api := auditAPIs[g.rng.IntN(len(auditAPIs))]
	g.deprecated = g.rng.IntN(100) == 0
	if g.deprecated {
		api = auditDeprecatedAPIs[g.rng.IntN(len(auditDeprecatedAPIs))]
	}
	verb := auditVerbs[g.rng.IntN(len(auditVerbs))]
	agent := g.rng.IntN(g.agents)
	e := auditEvent{
		api: api, verb: verb, agent: agent, id: g.rng.Uint64(),
		user: g.user(agent), ip: g.rng.IntN(1 << 16),
		bodies: verb != "watch" && g.rng.IntN(20) == 0,
	}
	out := g.out[:0]
	if verb == "watch" {
		e.stage = "ResponseStarted"
		g.lines[0] = e.append(g.lines[0][:0], g, g.now)
		out = append(out, g.lines[0])
	}
	e.stage = "ResponseComplete"
	g.lines[1] = e.append(g.lines[1][:0], g, g.now.Add(time.Duration(g.rng.IntN(50000))*time.Microsecond))
	return append(out, g.lines[1])
}

// user is the user of an agent: service accounts mostly, nodes, and people with kubectl.
func (g *auditGen) user(agent int) string {
	switch {
	case agent%10 == 0:
		return "user-" + strconv.Itoa(agent%50) + "@example.com"
	case agent%7 == 0:
		return "system:node:node-" + strconv.Itoa(agent%200)
	}
	return "system:serviceaccount:ns-" + strconv.Itoa(agent%300) + ":sa-" + strconv.Itoa(agent%1000)
}

type auditEvent struct {
	api         auditAPI
	verb, stage string
	user        string
	agent, ip   int
	id          uint64
	bodies      bool
}

func (e *auditEvent) append(b []byte, g *auditGen, at time.Time) []byte {
	level := "Metadata"
	if e.bodies {
		level = "RequestResponse"
	}
	name := "obj-" + strconv.Itoa(e.ip%5000)
	b = fmt.Appendf(b, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":%q,"auditID":"%08x-%04x-4%03x-8%03x-%012x","stage":%q,`,
		level, e.id>>32, (e.id>>16)&0xffff, e.id&0xfff, (e.id>>12)&0xfff, e.id&0xffffffffffff, e.stage)
	b = fmt.Appendf(b, `"requestURI":"%s","verb":%q,`, e.uri(name), e.verb)
	b = fmt.Appendf(b, `"user":{"username":%q,"uid":"%08x-1111-2222-3333-444455556666","groups":["system:serviceaccounts","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=%016x"]}},`,
		e.user, e.agent, e.id)
	b = fmt.Appendf(b, `"sourceIPs":["10.%d.%d.%d"],"userAgent":%q,`, e.ip>>12, (e.ip>>4)&0xff, e.ip&0xf, userAgent(e.agent))
	b = append(b, `"objectRef":{"resource":"`...)
	b = append(b, e.api.resource...)
	b = append(b, `","namespace":"ns-`...)
	b = strconv.AppendInt(b, int64(e.agent%300), 10)
	b = append(b, `","name":"`...)
	b = append(b, name...)
	if e.api.group != "" {
		b = append(b, `","apiGroup":"`...)
		b = append(b, e.api.group...)
	}
	b = append(b, `","apiVersion":"`...)
	b = append(b, e.api.version...)
	b = append(b, `"},"responseStatus":{"metadata":{},"code":200},`...)
	if e.bodies {
		b = g.appendBodies(b)
	}
	b = fmt.Appendf(b, `"requestReceivedTimestamp":"%s","stageTimestamp":"%s","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"reader-%d\" of ClusterRole \"reader\" to ServiceAccount \"sa\""`,
		at.Add(-time.Millisecond).Format(time.RFC3339Nano), at.Format("2006-01-02T15:04:05.000000Z07:00"), e.agent%100)
	if e.api.removed != "" {
		b = fmt.Appendf(b, `,"k8s.io/deprecated":"true","k8s.io/removed-release":"%s"`, e.api.removed)
	}
	return append(b, "}}\n"...)
}

func (e *auditEvent) uri(name string) string {
	prefix := "/api/" + e.api.version
	if e.api.group != "" {
		prefix = "/apis/" + e.api.group + "/" + e.api.version
	}
	prefix += "/namespaces/ns-" + strconv.Itoa(e.agent%300) + "/" + e.api.resource
	switch e.verb {
	case "list":
		return prefix + "?limit=500"
	case "watch":
		return prefix + "?allowWatchBookmarks=true&resourceVersion=12345&watch=true"
	case "create":
		return prefix
	}
	return prefix + "/" + name
}

// appendBodies writes a request and a response object of 1–8 KiB each, a ConfigMap's
// data.
func (g *auditGen) appendBodies(b []byte) []byte {
	for _, member := range []string{"requestObject", "responseObject"} {
		n := 1<<10 + g.rng.IntN(7<<10)
		b = fmt.Appendf(b, `%q:{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"default","labels":{"app.kubernetes.io/name":"settings"}},"data":{"config.yaml":"`, member)
		b = append(b, g.body[:n]...)
		b = append(b, `"}},`...)
	}
	return b
}

// userAgent is agent's user agent: a tenth kubectl's, of one of twelve versions.
func userAgent(agent int) string {
	if agent%10 == 0 {
		return "kubectl/v1." + strconv.Itoa(24+agent%12) + ".2 (linux/amd64) kubernetes/5a6b7c8"
	}
	return "controller-" + strconv.Itoa(agent) + "/v0.31.2 (linux/amd64) kubernetes/0123abc"
}
