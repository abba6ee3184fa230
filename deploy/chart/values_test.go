package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
)

func TestTheSchemaRejectsUnknownKeysAndBadValues(t *testing.T) {
	tests := []struct {
		name, values string
		// want is a part of the error, naming what was wrong.
		want string
	}{
		{"an unknown top-level key", `agnet: {interval: 10m}`, "agnet"},
		{"an unknown nested key", `agent: {intervall: 10m}`, "intervall"},
		{"an unknown key deep in the server", `server: {ingress: {tls: {secret: x}}}`, "secret"},
		{"an interval that is not a duration", `agent: {interval: ten}`, "/agent/interval"},
		{"an interval under a minute", `agent: {interval: 30s}`, "/agent/interval"},
		{"a target with a patch version", `agent: {targets: ["1.37.1"]}`, "/agent/targets/0"},
		{"a target that is no version", `agent: {targets: [latest]}`, "/agent/targets/0"},
		{"more than eight agent targets", `agent: {targets: ["1.30","1.31","1.32","1.33","1.34","1.35","1.36","1.37","1.38"]}`, "/agent/targets"},
		{"more than four server targets", `server: {targets: ["1.34","1.35","1.36","1.37","1.38"]}`, "/server/targets"},
		{"a server URL without a scheme", `agent: {serverUrl: upgradescope.example.com}`, "/agent/serverUrl"},
		{"a server URL with a URL only at its end", `agent: {serverUrl: "ftp://evil  https://a.b"}`, "/agent/serverUrl"},
		{"a server URL carrying a second container arg", `agent: {serverUrl: "x\n            - --health-addr=0.0.0.0:1 https://a.b"}`, "/agent/serverUrl"},
		{"an Ingress path with a YAML comment", `server: {ingress: {path: "/ #x"}}`, "/server/ingress/path"},
		{"a negative memory limit", `agent: {resources: {limits: {memory: -5}}}`, "/agent/resources/limits/memory"},
		{"a negative server CPU request", `server: {resources: {requests: {cpu: -1}}}`, "/server/resources/requests/cpu"},
		{"a label selector expression with an unknown operator", `networkPolicy: {serverIngressFrom: [{podSelector: {matchExpressions: [{key: app, operator: Like}]}}]}`, "operator"},
		{"an ipBlock that is no CIDR", `networkPolicy: {serverIngressFrom: [{ipBlock: {cidr: "10.0.0.0 #x"}}]}`, "cidr"},
		{"a bundle URL that is no URL", `bundles: {urls: ["ftp://bundles.example/kb.tar.gz"]}`, "/bundles/urls/0"},
		{"a retention in weeks", `server: {retention: 2w}`, "/server/retention"},
		{"a stale-after that is no duration", `server: {staleAfter: soon}`, "/server/staleAfter"},
		{"a log level the binary does not know", `agent: {logLevel: verbose}`, "/agent/logLevel"},
		{"an image digest that is not sha256", `image: {digest: "md5:abc"}`, "/image/digest"},
		{"a short ingest token", `server: {ingestToken: short}`, "/server/ingestToken"},
		{"replicas above one on SQLite", `server: {enabled: true, replicas: 2, ingestToken: ingest-token-0123456789}`, "existingSecret"},
		{"a replicas string", `server: {replicas: "2"}`, "/server/replicas"},
		{"a team map entry without a team", `server: {teamMap: [{pattern: "payments-*"}]}`, "team"},
		{"a NetworkPolicy peer that is no peer", `networkPolicy: {serverIngressFrom: [{namespace: ingress-nginx}]}`, "namespace"},
		{"rbac gitops for a tool the chart does not know", `rbac: {gitops: {fleet: true}}`, "fleet"},
		{"an audit log volume that names itself, which the chart does", `agent: {auditLog: {path: /var/log/kubernetes/audit, volume: {name: logs, emptyDir: {}}}}`, "propertyName 'name'"},
		{"an audit log path that is not absolute", `agent: {auditLog: {path: audit.log, volume: {emptyDir: {}}}}`, "/agent/auditLog/path"},
		{"an audit window in weeks", `agent: {auditLog: {since: 4w}}`, "/agent/auditLog/since"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderChart(values(t, tt.values))
			if err == nil {
				t.Fatalf("values accepted, want them refused naming %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

func TestTheSchemaAcceptsWhatTheBinaryAccepts(t *testing.T) {
	for _, v := range []string{
		`agent: {interval: 1m}`, `agent: {interval: 90s}`, `agent: {interval: 1h30m}`,
		`agent: {targets: ["1.36", "1.37"]}`, `server: {retention: "0"}`, `server: {retention: 2160h}`, `agent: {auditLog: {since: 720h}}`, `agent: {auditLog: {since: 7d}}`,
		`agent: {serverUrl: "https://upgradescope.example.com:8443/", serverTokenSecret: {name: push-token}}`,
		`bundles: {pollMinDelay: 1m30s, pollMaxDelay: 2m}`, `bundles: {pollMinDelay: 1s, pollMaxDelay: 1s}`,
		`server: {ingress: {path: /upgradescope/}}`, `agent: {resources: {limits: {memory: 0, cpu: 0.5}}}`,
		`networkPolicy: {serverIngressFrom: [{podSelector: {matchExpressions: [{key: app.kubernetes.io/name, operator: In, values: [prometheus]}]}}, {ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}, {ipBlock: {cidr: "fd00::/8"}}]}`,
		`image: {digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`,
	} {
		if _, err := renderChart(values(t, v)); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

func TestTheTemplatesRefuseCombinationsThatWouldFailOpenOrNotRun(t *testing.T) {
	tests := []struct {
		name, values, want string
	}{
		{"bundle URLs without a verification key", `bundles: {urls: ["https://bundles.example/kb.tar.gz"]}`,
			"bundles.urls needs bundles.verificationKey"},
		{"a server without an ingest token", `server: {enabled: true}`, "server.enabled needs server.ingestToken or server.existingSecret"},
		{"an external server URL without a token", `agent: {serverUrl: "https://hub.example.com"}`, "agent.serverUrl needs agent.serverTokenSecret.name"},
		{"a ServiceMonitor without a read token", `{server: {enabled: true, ingestToken: ingest-token-0123456789}, metrics: {serviceMonitor: {enabled: true}}}`,
			"metrics.serviceMonitor needs a read token"},
		{"an open read API behind an Ingress nobody agreed to", `server: {enabled: true, ingestToken: ingest-token-0123456789, allowAnonymousRead: true, ingress: {enabled: true, host: us.example.com}}`,
			"server.ingress.allowAnonymousRead"},
		{"an Ingress without a host", `server: {enabled: true, ingestToken: ingest-token-0123456789, ingress: {enabled: true}}`, "server.ingress.enabled needs server.ingress.host"},
		{"cert-manager without an issuer", `server: {enabled: true, ingestToken: ingest-token-0123456789, tls: {certManager: {enabled: true}}}`,
			"issuerRef.name"},
		{"notification keys without their Secret", `server: {enabled: true, ingestToken: ingest-token-0123456789, notifications: {slackWebhookKey: slack}}`,
			"server.notifications.existingSecret"},
		{"a webhook signing key without a webhook", `server: {enabled: true, ingestToken: ingest-token-0123456789, notifications: {existingSecret: notify, webhookSecretKey: key}}`,
			"set server.notifications.webhookKey too"},
		{"a NetworkPolicy with no peer to admit, which Kubernetes reads as every source",
			`{agent: {enabled: false}, server: {enabled: true, ingestToken: ingest-token-0123456789}, networkPolicy: {enabled: true}}`,
			"networkPolicy.serverIngressFrom"},
		{"a bundle poll minimum above its maximum", `bundles: {pollMinDelay: 10m, pollMaxDelay: 1s}`,
			"bundles.pollMinDelay 10m and bundles.pollMaxDelay 1s"},
		{"a bundle poll minimum under a second", `bundles: {pollMinDelay: 500ms}`, "want 1s ≤ min ≤ max"},
		{"an ingest token that is also the read token", `server: {enabled: true, ingestToken: same-token-0123456789, readToken: same-token-0123456789}`,
			"server.ingestToken, readToken and adminToken must all differ"},
		{"a read token that is also the admin token", `server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: same-token-0123456789, adminToken: same-token-0123456789}`,
			"must all differ"},
		{"one Secret key for two tokens", `server: {enabled: true, existingSecret: tokens, existingSecretKeys: {ingestToken: token, readToken: token}}`,
			"server.existingSecretKeys: the ingest, read and admin tokens must be different keys"},
		{"an open read API on a LoadBalancer", `server: {enabled: true, ingestToken: ingest-token-0123456789, allowAnonymousRead: true, service: {type: LoadBalancer}}`,
			"server.service.type LoadBalancer"},
		{"an open read API on a NodePort", `server: {enabled: true, ingestToken: ingest-token-0123456789, allowAnonymousRead: true, service: {type: NodePort}}`,
			"server.service.type NodePort"},
		{"an audit log path without a volume to read it from", `agent: {auditLog: {path: /var/log/kubernetes/audit}}`,
			"agent.auditLog.path needs agent.auditLog.volume"},
		{"an audit log volume without a path to read", `agent: {auditLog: {volume: {emptyDir: {}}}}`,
			"agent.auditLog.volume needs agent.auditLog.path"},
		{"an audit log path outside the volume's mount", `agent: {auditLog: {path: /var/log/audit.log, volume: {emptyDir: {}}}}`,
			"agent.auditLog.path /var/log/audit.log is outside agent.auditLog.mountPath /var/log/kubernetes/audit"},
		{"an audit log path that only starts like the mount", `agent: {auditLog: {path: /var/log/kubernetes/audit2/x.log, volume: {emptyDir: {}}}}`,
			"is outside agent.auditLog.mountPath"},
		{"tokens both inline and in an existing Secret", `server: {enabled: true, ingestToken: ingest-token-0123456789, existingSecret: tokens}`,
			"do not also set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderChart(values(t, tt.values))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render = %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}

// The server reads its token files once: a token changed by helm upgrade must roll its pods.
func TestChangingATokenTheChartRendersRollsTheServerPods(t *testing.T) {
	checksum := func(vals string) string {
		for _, obj := range objects(t, render(t, values(t, vals))) {
			if obj["kind"] == "Deployment" && dig(obj, "metadata")["name"] == "us-server" {
				sum, _ := dig(obj, "spec", "template", "metadata", "annotations")["checksum/tokens"].(string)
				return sum
			}
		}
		t.Fatal("no server Deployment rendered")
		return ""
	}
	base := `server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: read-token-0123456789}`
	before := checksum(base)
	if before == "" {
		t.Fatal("the server pods carry no checksum/tokens annotation")
	}
	for name, changed := range map[string]string{
		"ingest": `server: {enabled: true, ingestToken: ingest-token-9876543210, readToken: read-token-0123456789}`,
		"read":   `server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: read-token-9876543210}`,
		"admin":  `server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: read-token-0123456789, adminToken: admin-token-0123456789}`,
	} {
		if checksum(changed) == before {
			t.Errorf("a new %s token leaves the server pods' template unchanged: they keep the old one", name)
		}
	}
	if checksum(base) != before {
		t.Error("the same tokens render a different checksum: every upgrade would roll the pods")
	}
}

func TestChartValues(t *testing.T) {
	tests := []struct {
		name          string
		values        string
		want, notWant []string
	}{
		{"by default the agent manages the CRD and may patch it, and pushes nowhere", ``,
			[]string{"--manage-crd=true", "clusterreadinesses.upgradescope.basit.engineer", "--health-addr=:8081", "--log-format=text", `image: "ghcr.io/upgradescope/upgradescope:0.1.0"`},
			[]string{"--target", "--server=", "kind: Service\n"}},
		{"manageCRD false drops the CRD write permission", `agent: {manageCRD: false}`,
			[]string{"--manage-crd=false"}, []string{"clusterreadinesses.upgradescope.basit.engineer"}},
		{"targets make the agent own spec.targets", `agent: {targets: ["1.37", "1.38"]}`,
			[]string{"--target=1.37,1.38"}, nil},
		{"bundle URLs are polled with the key from a ConfigMap and a cache", `
bundles:
  urls: ["https://bundles.example/kb.tar.gz"]
  verificationKey: "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n"
  tokenSecret: {name: bundle-token, key: token}`,
			[]string{"--bundle-url=https://bundles.example/kb.tar.gz", "--verification-key=/etc/upgradescope/bundles/key.pem",
				"--bundle-cache=/var/cache/upgradescope/bundles", "--bundle-token-file=/etc/upgradescope/bundle-token/token",
				`key.pem: "-----BEGIN PUBLIC KEY-----\nabc`, "emptyDir: {}", "secretName: bundle-token"}, nil},
		{"without bundle URLs nothing about bundles is rendered", ``, nil, []string{"--bundle", "bundle-key"}},
		{"with the server the agent pushes to its Service with the ingest token", `server: {enabled: true, ingestToken: ingest-token-0123456789}`,
			[]string{"--server=http://us-server.upgradescope.svc.cluster.local:80", "--ingest-token-file=/etc/upgradescope/server-token/token", "--require-read-credential"},
			[]string{"--read-token-file"}},
		{"a read token replaces --require-read-credential", `server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: read-token-0123456789}`,
			[]string{"--read-token-file=/etc/upgradescope/tokens/readToken", "readToken: \"read-token-0123456789\""}, []string{"--require-read-credential"}},
		{"an anonymous read API is opted into", `server: {enabled: true, ingestToken: ingest-token-0123456789, allowAnonymousRead: true}`,
			[]string{"--allow-anonymous-read"}, []string{"--require-read-credential"}},
		{"an explicit server URL wins over the in-cluster server, with its CA", `
server: {enabled: true, ingestToken: ingest-token-0123456789}
agent: {serverUrl: "https://hub.example.com", serverTokenSecret: {name: hub-token}, serverCA: {configMap: hub-ca}}`,
			[]string{"--server=https://hub.example.com", "secretName: hub-token", "name: hub-ca", "--server-ca-file=/etc/upgradescope/server-ca/ca.crt"},
			[]string{"--server=http://us-server"}},
		{"a TLS Secret of the user's has no CA key unless named: the agent trusts the system roots",
			`{server: {enabled: true, ingestToken: ingest-token-0123456789, tls: {secretName: my-tls}}}`,
			[]string{"secretName: my-tls"}, []string{"ca.crt", "--server-ca-file"}},
		{"a TLS Secret of the user's with a named CA key: the agent and the ServiceMonitor trust it",
			`{server: {enabled: true, ingestToken: ingest-token-0123456789, readToken: read-token-0123456789, tls: {secretName: my-tls, caKey: ca.pem}}, metrics: {serviceMonitor: {enabled: true}}}`,
			[]string{"items: [{key: ca.pem, path: ca.crt}]", "--server-ca-file=/etc/upgradescope/server-ca/ca.crt", "secret: {name: my-tls, key: ca.pem}"}, nil},
		{"cert-manager's Secret carries ca.crt from a CA issuer",
			`{server: {enabled: true, ingestToken: ingest-token-0123456789, tls: {certManager: {enabled: true, issuerRef: {name: ca}}}}}`,
			[]string{"items: [{key: ca.crt, path: ca.crt}]", "--server-ca-file=/etc/upgradescope/server-ca/ca.crt"}, nil},
		{"a digest pins the image", `image: {digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`,
			[]string{"ghcr.io/upgradescope/upgradescope@sha256:0123456789abcdef"}, []string{"upgradescope:0.1.0"}},
		{"helm storage reads can be turned off", `rbac: {helmStorage: false}`, nil, []string{`resources: ["secrets", "configmaps"]`}},
		{"GitOps reads are off by default", ``, nil, []string{"argoproj.io", "helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"}},
		{"kubelet configz is off by default: no nodes/proxy, no flag", ``, nil, []string{"nodes/proxy", "--kubelet-configz"}},
		{"kubelet configz on grants nodes/proxy and passes the flag", `rbac: {kubeletConfigz: true}`,
			[]string{`resources: ["nodes/proxy"]`, "- --kubelet-configz"}, nil},
		{"kube-proxy is read by name through a Role in kube-system", ``,
			[]string{"kind: Role\n", "namespace: kube-system", `resourceNames: ["kube-proxy"]`}, nil},
		{"Argo CD reads alone", `rbac: {gitops: {argocd: true}}`, []string{`apiGroups: ["argoproj.io"]`}, []string{"helm.toolkit.fluxcd.io"}},
		{"without an audit log nothing about it is rendered", ``, nil, []string{"--audit-log", "audit-log"}},
		{"an audit log file in a hostPath is mounted read-only and read each tick",
			`agent: {auditLog: {path: /var/log/kubernetes/audit/audit.log, volume: {hostPath: {path: /var/log/kubernetes/audit, type: Directory}}}}`,
			[]string{"- --audit-log=/var/log/kubernetes/audit/audit.log", "- --audit-since=30d",
				"{name: audit-log, mountPath: /var/log/kubernetes/audit, readOnly: true}", "- name: audit-log\n          hostPath:\n            path: /var/log/kubernetes/audit\n            type: Directory"}, nil},
		{"a server without an agent renders no RBAC", `{agent: {enabled: false}, server: {enabled: true, ingestToken: ingest-token-0123456789}}`,
			[]string{"kind: Deployment"}, []string{"ClusterRole", "name: us-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, values(t, tt.values))
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("rendered chart lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("rendered chart has %q", w)
				}
			}
		})
	}
}

// The team map the chart renders into its ConfigMap is one the server loads.
func TestTheRenderedTeamMapLoadsInTheServer(t *testing.T) {
	for _, obj := range objects(t, render(t, values(t, goldenValues("networkpolicy")))) {
		if obj["kind"] != "ConfigMap" {
			continue
		}
		data, _ := obj["data"].(map[string]any)
		file := filepath.Join(t.TempDir(), "team-map.yaml")
		if err := os.WriteFile(file, []byte(data["team-map.yaml"].(string)), 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := server.LoadTeamMap(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m[0].Pattern != "payments-*" || m[1].Team != "platform" {
			t.Errorf("team map = %+v, want the two rules in order", m)
		}
		return
	}
	t.Fatal("no team map ConfigMap rendered")
}

// Every object the schema describes by its properties refuses other keys: a typo in a values
// file fails the install instead of being ignored.
func TestEveryObjectInTheSchemaRefusesUnknownKeys(t *testing.T) {
	raw, err := os.ReadFile(chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, node map[string]any)
	walk = func(path string, node map[string]any) {
		if props, ok := node["properties"].(map[string]any); ok {
			if node["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is %v, want false", path, node["additionalProperties"])
			}
			for name, p := range props {
				if child, ok := p.(map[string]any); ok {
					walk(path+"/"+name, child)
				}
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("", schema)
}
