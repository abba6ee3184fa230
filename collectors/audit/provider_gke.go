package audit

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// GKE writes each audited Kubernetes API request to Cloud Logging as a LogEntry whose
// protoPayload is a Cloud Audit Logs AuditLog of serviceName "k8s.io", and puts the
// request's audit annotations (k8s.io/deprecated, k8s.io/removed-release) in the entry's
// labels. gcloud logging read --format=json prints a JSON array of entries; a log sink to
// Cloud Storage writes them one per line.
// https://cloud.google.com/kubernetes-engine/docs/how-to/audit-logging
// https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry
const formatGKE = "gke-cloud-audit"

const auditLogType = "type.googleapis.com/google.cloud.audit.AuditLog"

// isLogEntry: logName and resource are the two fields the LogEntry reference marks
// required.
func isLogEntry(r object) bool {
	return r.is("logName", '"') && r.is("resource", '{')
}

// gkeAuditLog is the part of an AuditLog the conversion reads.
// https://cloud.google.com/logging/docs/reference/audit/auditlog/rest/Shared.Types/AuditLog
type gkeAuditLog struct {
	Type               string `json:"@type"`
	ServiceName        string `json:"serviceName"`
	MethodName         string `json:"methodName"`
	ResourceName       string `json:"resourceName"`
	AuthenticationInfo struct {
		PrincipalEmail string `json:"principalEmail"`
	} `json:"authenticationInfo"`
	RequestMetadata struct {
		CallerIP                string `json:"callerIp"`
		CallerSuppliedUserAgent string `json:"callerSuppliedUserAgent"`
	} `json:"requestMetadata"`
}

// readLogEntry converts a Kubernetes API audit entry. Other entries a query or sink may
// hold (GKE's own cluster operations, container logs) carry no request and are skipped.
// GKE gives no stage: an entry is one request to the aggregation.
func readLogEntry(r object, emit func(*Event)) error {
	if !r.has("protoPayload") { // a jsonPayload or textPayload entry
		return nil
	}
	if !r.is("protoPayload", '{') {
		return errors.New("protoPayload is not an object")
	}
	var p gkeAuditLog
	if err := decode(r["protoPayload"], &p); err != nil {
		return fmt.Errorf("protoPayload: %w", err)
	}
	if p.Type != auditLogType || p.ServiceName != "k8s.io" {
		return nil
	}
	e, err := gkeEvent(r, &p)
	if err != nil {
		return err
	}
	emit(e)
	return nil
}

func gkeEvent(r object, p *gkeAuditLog) (*Event, error) {
	verb := methodVerb(p.MethodName)
	if verb == "" {
		return nil, errors.New("protoPayload.methodName names no verb")
	}
	ts := r.str("timestamp")
	if ts == "" {
		ts = r.str("receiveTimestamp")
	}
	at, err := stageTime(ts)
	if err != nil {
		return nil, fmt.Errorf("timestamp is %w", err)
	}
	e := &Event{
		Verb:           verb,
		User:           UserInfo{Username: p.AuthenticationInfo.PrincipalEmail},
		UserAgent:      p.RequestMetadata.CallerSuppliedUserAgent,
		ObjectRef:      objectRefFromResourceName(p.ResourceName),
		StageTimestamp: at,
	}
	if ip, err := netip.ParseAddr(p.RequestMetadata.CallerIP); err == nil {
		e.SourceIPs = []string{ip.String()}
	}
	if r.has("labels") {
		if err := decode(r["labels"], &e.Annotations); err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
	}
	return e, nil
}

// methodVerb is the verb that ends a Kubernetes method name:
// io.k8s.core.v1.pods.eviction.create is a create.
func methodVerb(method string) string {
	if i := strings.LastIndexByte(method, '.'); i >= 0 {
		return method[i+1:]
	}
	return ""
}

// objectRefFromResourceName reads an AuditLog resourceName, <group>/<version>/ and the
// resource path, where the legacy core group is named "core":
// core/v1/namespaces/default/pods/web, apps/v1/deployments. A name that is no resource
// path (a non-resource request) has no object reference.
func objectRefFromResourceName(name string) *ObjectReference {
	parts := strings.Split(name, "/")
	if len(parts) < 3 {
		return nil
	}
	group := parts[0]
	if group == "core" {
		group = ""
	}
	return resourceRef(group, parts[1], parts[2:])
}

// resourceRef reads the path after an API group and version,
// [namespaces/<namespace>/]<resource>[/<name>[/<subresource>]], as the API server's
// RequestInfoFactory does: namespaces/<name>/status and /finalize are a namespace's own
// subresources, not a resource in it.
// https://github.com/kubernetes/apiserver/blob/master/pkg/endpoints/request/requestinfo.go
func resourceRef(group, version string, parts []string) *ObjectReference {
	if version == "" || len(parts) == 0 {
		return nil
	}
	if parts[0] == "namespaces" && len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	ref := &ObjectReference{APIGroup: group, APIVersion: version, Resource: parts[0]}
	if len(parts) > 2 {
		ref.Subresource = parts[2]
	}
	if ref.Resource == "" {
		return nil
	}
	return ref
}
