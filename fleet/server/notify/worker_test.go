package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

func hmacHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// drain runs passes, moving the clock on by step after each, until the outbox is empty or
// passes run out; it answers how many passes it took.
func drain(t *testing.T, w *Worker, s store.Store, c *clock, step time.Duration, passes int) int {
	t.Helper()
	for i := range passes {
		if err := w.Pass(t.Context()); err != nil {
			t.Fatalf("Pass: %v", err)
		}
		if queued(t, s) == "map[]" {
			return i + 1
		}
		c.Advance(step)
	}
	t.Fatalf("still queued after %d passes: %s", passes, queued(t, s))
	return 0
}

func TestEveryChangeReachesSinksThatFailHangRateLimitAndRedirectBeforeRecovering(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		st := open()
		elsewhere := newTestSink(t)
		const secret = "s3cret"
		webhook := newTestSink(t,
			answer(http.StatusInternalServerError),
			hang, // past the 2 s request timeout
			answer(http.StatusTooManyRequests, "Retry-After", "120"),
			redirect(elsewhere.URL),
			answer(http.StatusServiceUnavailable, "Retry-After", "Fri, 31 Dec 1999 23:59:59 GMT"), // past: no hold
		)
		slack := newTestSink(t, answer(http.StatusBadGateway))
		hook, err := NewWebhook(webhook.URL+"/hooks/T0?token=abc", secret)
		if err != nil {
			t.Fatal(err)
		}
		sl, err := NewSlack(slack.URL + "/services/T/B/X")
		if err != nil {
			t.Fatal(err)
		}
		var sent []*Body
		sent = append(sent, enqueue(t, st, "a", hashOf(1), "first of a", "webhook", "slack"))
		sent = append(sent, enqueue(t, st, "a", hashOf(2), "second of a", "webhook", "slack"))
		sent = append(sent, enqueue(t, st, "b", hashOf(3), "only of b <&>", "webhook", "slack"))
		c := newClock()
		w := NewWorker(st, []Sink{hook, sl}, WithClock(c.Now))
		// Ten minutes a pass covers every backoff and hold here, and stays far from 8 h.
		drain(t, w, st, c, 10*time.Minute, 20)

		sch := webhookSchema(t)
		ids := map[string]string{} // deliveryId → title, as delivered
		var deliveredOrder []string
		for _, r := range webhook.requests() {
			b := checkWebhook(t, sch, secret, r)
			if prev, ok := ids[b.DeliveryID]; ok && prev != b.Changes[0].Title {
				t.Errorf("delivery id %s carried %q and %q: want one message per id", b.DeliveryID, prev, b.Changes[0].Title)
			}
			ids[b.DeliveryID] = b.Changes[0].Title
			if r.status == http.StatusOK {
				deliveredOrder = append(deliveredOrder, b.Changes[0].Title)
			}
		}
		for _, b := range sent {
			if got := countTitle(deliveredOrder, b.Changes[0].Title); got != 1 {
				t.Errorf("%q delivered %d times to the webhook, want once", b.Changes[0].Title, got)
			}
			if _, ok := ids[b.DeliveryID]; !ok {
				t.Errorf("delivery id %s never sent: retries must keep the enqueued id", b.DeliveryID)
			}
		}
		assertClusterOrder(t, webhook.requests(), "first of a", "second of a")
		if n := len(elsewhere.requests()); n != 0 {
			t.Errorf("the redirect's target got %d requests, want none: redirects are not followed", n)
		}
		var texts []string
		for _, r := range slack.requests() {
			if r.status == http.StatusOK {
				var m map[string]string
				if err := json.Unmarshal(r.body, &m); err != nil {
					t.Fatalf("slack body: %v", err)
				}
				texts = append(texts, m["text"])
			}
		}
		slices.Sort(texts)
		want := []string{
			"[upgradescope] a → 1.33: new-blocker: first of a (no owning team)",
			"[upgradescope] a → 1.33: new-blocker: second of a (no owning team)",
			"[upgradescope] b → 1.33: new-blocker: only of b &lt;&amp;&gt; (no owning team)",
		}
		if !slices.Equal(texts, want) {
			t.Errorf("slack got %q, want %q", texts, want)
		}
		if got := counter(w, "webhook", "delivered") + counter(w, "slack", "delivered"); got != 6 {
			t.Errorf("delivered counter = %d, want 6", got)
		}
	})
}

// assertClusterOrder: no request carries later's title before one carrying earlier's was
// answered 200.
func assertClusterOrder(t *testing.T, rs []received, earlier, later string) {
	t.Helper()
	done := false
	for _, r := range rs {
		title := titleOf(t, r)
		if title == earlier && r.status == http.StatusOK {
			done = true
		}
		if title == later && !done {
			t.Errorf("%q was sent before %q was delivered: a cluster's messages must go in order", later, earlier)
			return
		}
	}
}

func titleOf(t *testing.T, r received) string {
	var b Body
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Changes[0].Title
}

func countTitle(titles []string, title string) int {
	n := 0
	for _, x := range titles {
		if x == title {
			n++
		}
	}
	return n
}

func hashOf(i int) string { return fmt.Sprintf("%064x", i) }

func TestADeliveryIsGivenUpAfterEightAttemptsAndCountedAsFailed(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		st := open()
		down := newTestSink(t, repeat(answer(http.StatusInternalServerError), 20)...)
		hook, _ := NewWebhook(down.URL, "")
		enqueue(t, st, "a", hashOf(1), "doomed", "webhook")
		c := newClock()
		w := NewWorker(st, []Sink{hook}, WithClock(c.Now))
		drain(t, w, st, c, time.Hour, 20) // an hour a pass: past every backoff, under 8 h in all
		if n := len(down.requests()); n != MaxAttempts {
			t.Errorf("the sink got %d attempts, want %d", n, MaxAttempts)
		}
		if got := counter(w, "webhook", "failed"); got != 1 {
			t.Errorf("failed counter = %d, want 1", got)
		}
	})
}

func TestBackoffDoublesFromItsBase(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		st := open()
		down := newTestSink(t, repeat(answer(http.StatusInternalServerError), 20)...)
		hook, _ := NewWebhook(down.URL, "")
		enqueue(t, st, "a", hashOf(1), "m", "webhook")
		c := newClock()
		w := NewWorker(st, []Sink{hook}, WithClock(c.Now))
		mustPass(t, w)
		// Attempt n+1 is due DefaultBackoff·2^(n-1) after attempt n: a second short of it
		// nothing is sent, at it one attempt is.
		for n, wait := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute} {
			c.Advance(wait - time.Second)
			mustPass(t, w)
			if got := len(down.requests()); got != n+1 {
				t.Fatalf("a second before attempt %d: %d attempts, want %d", n+2, got, n+1)
			}
			c.Advance(time.Second)
			mustPass(t, w)
			if got := len(down.requests()); got != n+2 {
				t.Fatalf("when attempt %d is due: %d attempts, want %d", n+2, got, n+2)
			}
		}
	})
}

func TestRetryAfterHoldsTheSinkForEveryMessageUpToAnHour(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		st := open()
		limited := newTestSink(t, answer(http.StatusTooManyRequests, "Retry-After", "86400"))
		hook, _ := NewWebhook(limited.URL, "")
		enqueue(t, st, "a", hashOf(1), "first", "webhook")
		c := newClock()
		w := NewWorker(st, []Sink{hook}, WithClock(c.Now))
		mustPass(t, w)
		enqueue(t, st, "b", hashOf(2), "another cluster's", "webhook") // held too: the sink is
		c.Advance(MaxRetryAfter - time.Second)
		mustPass(t, w)
		if n := len(limited.requests()); n != 1 {
			t.Fatalf("%d requests while held, want the first only", n)
		}
		c.Advance(time.Second) // a day asked for, an hour honoured
		mustPass(t, w)
		if n := len(limited.requests()); n != 3 {
			t.Errorf("%d requests once the hold ended, want 3 (both messages)", n)
		}
		if q := queued(t, st); q != "map[]" {
			t.Errorf("queued after the hold %s, want nothing", q)
		}
	})
}

func TestMessagesQueuedLongerThanEightHoursAreDroppedAndCounted(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		st := open()
		down := newTestSink(t, repeat(answer(http.StatusServiceUnavailable), 20)...)
		hook, _ := NewWebhook(down.URL, "")
		enqueue(t, st, "a", hashOf(1), "stale", "webhook")
		c := newClock()
		w := NewWorker(st, []Sink{hook}, WithClock(c.Now))
		mustPass(t, w)
		c.Advance(MaxQueued + time.Second)
		mustPass(t, w)
		if q := queued(t, st); q != "map[]" {
			t.Errorf("queued %s after 8 h, want nothing", q)
		}
		if got := counter(w, "webhook", "dropped"); got != 1 {
			t.Errorf("dropped counter = %d, want 1", got)
		}
		if n := len(down.requests()); n != 1 {
			t.Errorf("%d requests, want only the first attempt", n)
		}
	})
}

func TestWorkersOnTwoHandlesDeliverEachMessageOnce(t *testing.T) {
	backends(t, func(t *testing.T, open func() store.Store) {
		a, b := open(), open()
		ok := newTestSink(t)
		hook, _ := NewWebhook(ok.URL, "")
		for i := range 12 {
			enqueue(t, a, fmt.Sprintf("c%d", i%4), hashOf(i), fmt.Sprintf("m%d", i), "webhook")
		}
		c := newClock()
		var wg sync.WaitGroup
		for _, st := range []store.Store{a, b} {
			w := NewWorker(st, []Sink{hook}, WithClock(c.Now))
			wg.Go(func() {
				for range 10 {
					if err := w.Pass(t.Context()); err != nil {
						t.Errorf("Pass: %v", err)
					}
				}
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for _, r := range ok.requests() {
			seen[titleOf(t, r)]++
		}
		if len(seen) != 12 {
			t.Errorf("%d messages delivered, want 12: %v", len(seen), seen)
		}
		for title, n := range seen {
			if n != 1 {
				t.Errorf("%s delivered %d times by two workers, want once", title, n)
			}
		}
		for i := range 4 {
			assertClusterOrder(t, ok.requests(), fmt.Sprintf("m%d", i), fmt.Sprintf("m%d", i+4))
			assertClusterOrder(t, ok.requests(), fmt.Sprintf("m%d", i+4), fmt.Sprintf("m%d", i+8))
		}
	})
}

func TestARunningWorkerDeliversWhenWoken(t *testing.T) {
	st := mustOpen(t, t.TempDir()+"/u.db")
	got := make(chan string, 1)
	sinkSrv := newTestSink(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(HeaderDelivery)
	})
	hook, _ := NewWebhook(sinkSrv.URL, "")
	w := NewWorker(st, []Sink{hook}, WithPoll(time.Hour)) // only Wake can start a pass after the first
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	b := enqueue(t, st, "a", hashOf(1), "m", "webhook")
	w.Wake()
	select {
	case id := <-got:
		if id != b.DeliveryID {
			t.Errorf("delivered %s, want %s", id, b.DeliveryID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing delivered within 30 s of Wake")
	}
}

func mustPass(t *testing.T, w *Worker) {
	t.Helper()
	if err := w.Pass(t.Context()); err != nil {
		t.Fatalf("Pass: %v", err)
	}
}

func repeat(f func(http.ResponseWriter, *http.Request), n int) []func(http.ResponseWriter, *http.Request) {
	out := make([]func(http.ResponseWriter, *http.Request), n)
	for i := range out {
		out[i] = f
	}
	return out
}

func TestSinkURLsMustBeAbsoluteHTTPAndAreNeverShownWhole(t *testing.T) {
	for _, tc := range []struct{ url, err string }{
		{"https://hooks.slack.com/services/T0/B0/secret", ""},
		{"http://127.0.0.1:9/x", ""},
		{"hooks.slack.com/services/T0/B0/secret", "want an absolute http(s) URL"},
		{"ftp://example.com/secret", "ftp://example.com/…: want an absolute http(s) URL"},
		{"https:///secret", "names no host"},
		{"https://exa mple.com/secret", "not a URL"},
		{"http://h.example:99999/secret", "http://h.example:99999/…: the port must be 1 to 65535"},
		{"http://h.example:0/secret", "the port must be 1 to 65535"},
		{"http://h.example:65535/secret", ""},
	} {
		err := CheckURL(tc.url)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("CheckURL(%q) = %v, want %q", tc.url, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("CheckURL(%q) error %q shows the URL's path", tc.url, err)
		}
	}
	if got := Redacted("https://hooks.slack.com/services/T0/B0/secret?x=1"); got != "https://hooks.slack.com/…" {
		t.Errorf("Redacted = %q", got)
	}
}
