package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// webhookReceiver is a real webhook endpoint on loopback. While hanging it holds every
// request open until the client gives up (or the test ends); afterwards it answers 200.
type webhookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	hanging bool
	got     []webhookCall
	arrived chan struct{}
}

type webhookCall struct {
	delivery, signature string
	body                []byte
	answered            bool
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	w := &webhookReceiver{hanging: true, arrived: make(chan struct{}, 64)}
	stop := make(chan struct{})
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		hang := w.hanging
		w.got = append(w.got, webhookCall{delivery: r.Header.Get(notify.HeaderDelivery),
			signature: r.Header.Get(notify.HeaderSignature), body: body, answered: !hang})
		w.mu.Unlock()
		w.arrived <- struct{}{}
		if hang {
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		rw.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() { close(stop); w.Close() })
	return w
}

func (w *webhookReceiver) recover() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hanging = false
}

func (w *webhookReceiver) calls() []webhookCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]webhookCall(nil), w.got...)
}

// judgedEnvelope is a push of the teams inventory as cluster prod, judged as a collector's
// would be (every declared probe found nothing), with its removed APIs only when blocked.
func judgedEnvelope(t *testing.T, blocked bool, extra string) []byte {
	t.Helper()
	doc := teamsDocument(t, "prod-uid")
	if !blocked {
		doc.APIUsage = doc.APIUsage[1:2] // v1 Endpoints: deprecated, not removed
	}
	doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: extra})
	eng, err := clustersEngine()
	if err != nil {
		t.Fatal(err)
	}
	probetest.FoundNothing(doc, eng.Observe().Probes)
	body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: "prod",
		AgentVersion: "test", KBVersion: "test", Inventory: doc})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// A message enqueued while its sink hangs survives a SIGKILL of the server in the middle
// of delivering it: the restarted server, on the same database, delivers it, with the
// deliveryId and signature it had, once the dead process's lease has run out. On SQLite
// and on PostgreSQL.
func TestServeKilledWhileDeliveringDeliversTheMessageAfterARestart(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		killedWhileDelivering(t, "--db", filepath.Join(t.TempDir(), "fleet.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		killedWhileDelivering(t, "--db-url-file", writeSecret(t, t.TempDir(), "db-url", pgtest.URL(t)))
	})
}

// killedWhileDelivering runs the test on the database dbFlag dbValue names.
func killedWhileDelivering(t *testing.T, dbFlag, dbValue string) {
	hook := newWebhookReceiver(t)
	dir := t.TempDir()
	args := []string{dbFlag, dbValue, "--ingest-token-file", writeSecret(t, dir, "ingest", "ingest-secret"),
		"--webhook-file", writeSecret(t, dir, "hook", hook.URL+"/hooks/T0/secret-path"),
		"--webhook-secret-file", writeSecret(t, dir, "signing", "signing-key"),
		"--public-url", "https://fleet.example.com/"}
	p := startServe(t, args...)
	for i, blocked := range []bool{false, true} { // ready (a first evaluation: silent), then blocked
		if a := pushBody(p.url, "ingest-secret", judgedEnvelope(t, blocked, "step"+string(rune('a'+i))), "gzip"); a.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, a.status, a.body)
		}
	}
	select {
	case <-hook.arrived:
	case <-time.After(time.Minute):
		t.Fatalf("the webhook got nothing within a minute of the push; serve log:\n%s", p.logs.String())
	}
	p.kill() // SIGKILL while the webhook holds the request open
	if strings.Contains(p.logs.String(), "secret-path") {
		t.Errorf("serve logged the webhook URL's path:\n%s", p.logs.String())
	}
	hook.recover()
	p = startServe(t, args...)
	var delivered *webhookCall
	if !pollUntil(2*time.Minute, 100*time.Millisecond, func() bool {
		for _, c := range hook.calls() {
			if c.answered {
				delivered = &c
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the message was not delivered within 2 minutes of the restart; serve log:\n%s", p.logs.String())
	}
	first := hook.calls()[0]
	if delivered.delivery != first.delivery || string(delivered.body) != string(first.body) {
		t.Errorf("after the restart delivery %s was sent, want the same message as before the kill (%s)",
			delivered.delivery, first.delivery)
	}
	mac := hmac.New(sha256.New, []byte("signing-key"))
	mac.Write(delivered.body)
	if delivered.signature != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q does not verify", delivered.signature)
	}
	var b notify.Body
	if err := json.Unmarshal(delivered.body, &b); err != nil || b.Cluster.Name != "prod" || len(b.Changes) != 2 ||
		b.Changes[0].Kind != notify.KindNewBlocker {
		t.Errorf("delivered %s (%v), want prod's two new blockers", delivered.body, err)
	}
	if len(b.Changes) == 0 {
		t.Fatalf("delivered %s, want changes", delivered.body)
	}
	// The links open the page at the target that changed, the finding open.
	page := fmt.Sprintf("https://fleet.example.com/clusters/%d?target=%s", b.Cluster.ID, b.Changes[0].Targets[0])
	if b.Cluster.URL != page || b.Changes[0].URL != page+"&finding="+url.QueryEscape(b.Changes[0].Key) ||
		!slices.Equal(b.Changes[0].Teams, []string{"payments"}) {
		t.Errorf("delivered %s, want a link to %s, the finding's below it, and the Ingress's team, payments", delivered.body, page)
	}
	if strings.Contains(p.logs.String(), "secret-path") {
		t.Errorf("the restarted serve logged the webhook URL's path:\n%s", p.logs.String())
	}
}
