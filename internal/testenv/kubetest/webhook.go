package kubetest

import "testing"

// Environment variables naming the 1.35 server's audit webhook backend (hack/with-kube.sh):
// the loopback address it posts to, the file holding its bearer token, the cluster name its
// URL ends in (https://LISTEN/api/v1/audit/CLUSTER), and the TLS certificate and key to
// receive it with, signed by the CA the webhook trusts.
const (
	EnvAuditWebhookListen    = "UPGRADESCOPE_AUDIT_WEBHOOK_LISTEN"
	EnvAuditWebhookTokenFile = "UPGRADESCOPE_AUDIT_WEBHOOK_TOKEN_FILE"
	EnvAuditWebhookCluster   = "UPGRADESCOPE_AUDIT_WEBHOOK_CLUSTER"
	EnvAuditWebhookCertFile  = "UPGRADESCOPE_AUDIT_WEBHOOK_TLS_CERT_FILE"
	EnvAuditWebhookKeyFile   = "UPGRADESCOPE_AUDIT_WEBHOOK_TLS_KEY_FILE"
	EnvAuditWebhookCAFile    = "UPGRADESCOPE_AUDIT_WEBHOOK_CA_FILE"
)

// AuditWebhook is where the 1.35 server's audit webhook backend posts its batches: a test
// that serves TLS on Listen (a fixed port: one test at a time may) with CertFile and
// KeyFile, and takes TokenFile's token, receives the events of the server's requests as
// cluster Cluster. CAFile signed the certificate: a client of the receiver trusts it.
type AuditWebhook struct {
	Listen, TokenFile, Cluster string
	CertFile, KeyFile, CAFile  string
}

// Webhook is the 1.35 server's audit webhook backend. Without it the test is skipped, or
// fails under EnvRequire.
func Webhook(t testing.TB) AuditWebhook {
	t.Helper()
	return AuditWebhook{Listen: lookup(t, EnvAuditWebhookListen), TokenFile: lookup(t, EnvAuditWebhookTokenFile),
		Cluster: lookup(t, EnvAuditWebhookCluster), CertFile: lookup(t, EnvAuditWebhookCertFile),
		KeyFile: lookup(t, EnvAuditWebhookKeyFile), CAFile: lookup(t, EnvAuditWebhookCAFile)}
}
