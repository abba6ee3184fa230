package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/internal/retryafter"
	"github.com/upgradescope/upgradescope/inventory"
)

// retrySteps are the waits after a failed push; the last repeats. Each is jittered ±20%.
var retrySteps = []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 2 * time.Minute}

// Options configure a Client.
type Options struct {
	URL          string // the server's base URL
	Token        func() (string, error)
	CAFile       string
	ForceEvery   time.Duration
	ClusterName  string
	AgentVersion string
	KBVersion    string
	// Versions, when set, is read at every push instead of KBVersion: the kb version and
	// the bundles (name and revision) the agent evaluates with, read from one bundle set.
	// An agent's bundles can change while it runs; a change of revision is worth a push.
	Versions func() (kbVersion string, bundles []Bundle)
	Now      func() time.Time
	// Jitter returns a factor in [0.8, 1.2]; tests pin it.
	Jitter func() float64
}

// Client pushes snapshots. It is not safe for concurrent use.
type Client struct {
	opts       Options
	endpoint   string
	http       *http.Client
	lastHash   string
	lastPushed time.Time
	pending    *pending
	// Warning is set when the token would travel in clear text.
	Warning string
}

type pending struct {
	body     []byte
	hash     string
	failures int
	next     time.Time
}

// New validates the URL and builds a client.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q must be an http(s) URL with a host", opts.URL)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = func() float64 { return 0.8 + 0.4*rand.Float64() }
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if opts.CAFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("a server CA file needs an https server URL")
		}
		pool, err := caPool(opts.CAFile)
		if err != nil {
			return nil, err
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	c := &Client{
		opts: opts, endpoint: u.JoinPath(Path).String(),
		http: &http.Client{Timeout: 30 * time.Second, Transport: transport,
			// A redirect would resend the token elsewhere; it is an error instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	if u.Scheme == "http" && !loopback.Is(u.Hostname()) {
		c.Warning = fmt.Sprintf("server URL %s is plain http to a non-loopback host: the token travels in clear text", u.Redacted())
	}
	return c, nil
}

// Result says what a push attempt did, for the tick's log line.
type Result string

// Results.
const (
	Unchanged Result = "unchanged"
	Delivered Result = "ok"
	Failed    Result = "failed"
	Dropped   Result = "dropped" // a permanent refusal: retrying cannot help
)

// Offer is called once per tick with the new inventory: it replaces any pending push and
// sends it now if it changed or a forced sync is due.
func (c *Client) Offer(ctx context.Context, doc *inventory.Document) (Result, error) {
	hash, err := doc.Hash()
	if err != nil {
		return Failed, err
	}
	kb, bundles := c.versions()
	hash += BundlesKey(bundles)
	now := c.opts.Now()
	due := c.lastPushed.IsZero() || now.Sub(c.lastPushed) >= c.opts.ForceEvery
	if hash == c.lastHash && !due {
		c.pending = nil
		return Unchanged, nil
	}
	body, err := c.encode(doc, kb, bundles)
	if err != nil {
		return Failed, err
	}
	c.pending = &pending{body: body, hash: hash}
	return c.attempt(ctx)
}

// NextRetry is when a pending push should be tried again; false when none is pending.
func (c *Client) NextRetry() (time.Time, bool) {
	if c.pending == nil {
		return time.Time{}, false
	}
	return c.pending.next, true
}

// Retry tries the pending push again if its time has come.
func (c *Client) Retry(ctx context.Context) (Result, error) {
	if c.pending == nil || c.opts.Now().Before(c.pending.next) {
		return Unchanged, nil
	}
	return c.attempt(ctx)
}

func (c *Client) attempt(ctx context.Context) (Result, error) {
	p := c.pending
	_, err := c.send(ctx, p.body)
	var perm *permanentError
	switch {
	case err == nil:
		c.lastHash, c.lastPushed, c.pending = p.hash, c.opts.Now(), nil
		return Delivered, nil
	case errors.As(err, &perm):
		c.pending = nil
		return Dropped, err
	}
	step := time.Duration(float64(retrySteps[min(p.failures, len(retrySteps)-1)]) * c.opts.Jitter())
	var busy *busyError
	if errors.As(err, &busy) {
		step = busy.after // the server said when; the schedule's step would guess
	}
	p.failures++
	p.next = c.opts.Now().Add(step)
	return Failed, err
}

type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// maxRetryAfter caps the wait a server's Retry-After asks for: a snapshot held longer than a
// minute behind a busy server is a snapshot the fleet view shows late.
const maxRetryAfter = time.Minute

// busyError is a 429 or 503 that said, in Retry-After, when to try again.
type busyError struct {
	msg   string
	after time.Duration
}

func (e *busyError) Error() string { return e.msg }

// send posts one encoded envelope and answers the body of a 200 or 202.
func (c *Client) send(ctx context.Context, body []byte) ([]byte, error) {
	token, err := c.opts.Token()
	if err != nil {
		return nil, fmt.Errorf("read the server token: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("push to %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted {
		return msg, nil
	}
	return nil, c.refusal(resp, serverMessage(msg))
}

// refusal is the error of an answer other than 200 or 202: permanent when retrying cannot
// help, busy when the server said when to try again, else transient. msg is the server's.
func (c *Client) refusal(resp *http.Response, msg string) error {
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &permanentError{fmt.Sprintf("push refused (%s): %scheck the server token", resp.Status, prefixed(msg))}
	case resp.StatusCode == http.StatusUnprocessableEntity:
		return &permanentError{fmt.Sprintf("push refused (%s): the server could not accept this inventory: %s", resp.Status, msg)}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return &permanentError{fmt.Sprintf("push refused (%s): redirected to %s; point the server URL at the final address", resp.Status, resp.Header.Get("Location"))}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		if after, ok := retryafter.Parse(resp.Header.Get("Retry-After"), c.opts.Now(), maxRetryAfter); ok {
			return &busyError{fmt.Sprintf("push to %s: %s, retry after %s", c.endpoint, resp.Status, after), after}
		}
	case resp.StatusCode == http.StatusRequestTimeout:
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		// Any other refusal (409: the name is bound to another cluster) is the same on retry.
		return &permanentError{fmt.Sprintf("push refused (%s): %s", resp.Status, msg)}
	}
	return fmt.Errorf("push to %s: %s", c.endpoint, resp.Status)
}

// serverMessage is what a refusal's body says: the "error" of the server's JSON answer, else
// the body as sent, trimmed.
func serverMessage(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return string(bytes.TrimSpace(body))
}

// prefixed is msg followed by "; ", or nothing when the server said nothing.
func prefixed(msg string) string {
	if msg == "" {
		return ""
	}
	return msg + "; "
}

// Answer is what a server answers a push it took (POST /api/v1/snapshots, the server's
// own type too): a new snapshot (202), evaluated at the targets Evaluated names with each
// one's judgement in Verdicts, or a duplicate of the cluster's latest (200), stored once.
// A server older than Verdicts leaves it out; readers ignore members they do not know.
type Answer struct {
	ClusterID  int64     `json:"clusterId"`
	SnapshotID int64     `json:"snapshotId"`
	Duplicate  bool      `json:"duplicate"`
	Evaluated  []string  `json:"evaluated,omitempty"`
	Verdicts   []Verdict `json:"verdicts,omitempty"`
}

// Verdict is one evaluated target's judgement, as the server stored it.
type Verdict struct {
	Target   string `json:"target"`
	Verdict  string `json:"verdict"`
	Score    int    `json:"score"`
	Blockers int    `json:"blockers"`
}

// MarshalJSON writes a new snapshot's evaluated and verdicts even when it was evaluated at
// no target ([]: an evaluation that failed), and leaves both out of a duplicate's answer.
func (a Answer) MarshalJSON() ([]byte, error) {
	type plain Answer
	w := struct {
		plain
		Evaluated *[]string  `json:"evaluated,omitempty"`
		Verdicts  *[]Verdict `json:"verdicts,omitempty"`
	}{plain: plain(a)}
	if !a.Duplicate {
		evaluated, verdicts := a.Evaluated, a.Verdicts
		if evaluated == nil {
			evaluated = []string{}
		}
		if verdicts == nil {
			verdicts = []Verdict{}
		}
		w.Evaluated, w.Verdicts = &evaluated, &verdicts
	}
	return json.Marshal(w)
}

// Send pushes doc once, now, whether or not it changed, and answers what the server said:
// upgradescope push delivers an inventory exported elsewhere with it. The envelope, headers
// and refusals are the agent's; nothing is kept pending and nothing is retried here. A busy
// server's refusal says when to try again (BusyFor).
func (c *Client) Send(ctx context.Context, doc *inventory.Document) (Answer, error) {
	kb, bundles := c.versions()
	body, err := c.encode(doc, kb, bundles)
	if err != nil {
		return Answer{}, err
	}
	data, err := c.send(ctx, body)
	if err != nil {
		return Answer{}, err
	}
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return Answer{}, fmt.Errorf("read the server's answer from %s: %w", c.endpoint, err)
	}
	return a, nil
}

// BusyFor answers how long a busy server (429 or 503 with Retry-After) asked to wait.
func BusyFor(err error) (time.Duration, bool) {
	var busy *busyError
	if errors.As(err, &busy) {
		return busy.after, true
	}
	return 0, false
}

// Permanent says whether err is a refusal that retrying cannot change (a bad token, an
// inventory the server will not take, a name bound to another cluster).
func Permanent(err error) bool {
	var perm *permanentError
	return errors.As(err, &perm)
}

func (c *Client) encode(doc *inventory.Document, kb string, bundles []Bundle) ([]byte, error) {
	name := c.opts.ClusterName
	if name == "" {
		name = doc.ClusterID // the kube-system namespace UID
	}
	return Encode(Envelope{SchemaVersion: SchemaVersion, ClusterName: name, AgentVersion: c.opts.AgentVersion,
		KBVersion: kb, Bundles: bundles, Inventory: doc})
}

// versions answers what the next push names, its bundles kept to what a server accepts
// (CleanBundles), so an odd bundle name never costs the cluster its push.
func (c *Client) versions() (string, []Bundle) {
	if c.opts.Versions == nil {
		return c.opts.KBVersion, nil
	}
	kb, bundles := c.opts.Versions()
	return kb, CleanBundles(bundles)
}
