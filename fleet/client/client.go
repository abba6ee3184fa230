// Package client is the fleet server's API as Go calls, the way fleet/push is the agent's
// client: list, read, delete and rename clusters, read a cluster's report, the fleet at a
// target and its findings, have manifests gated, and run a candidate bundle's dry run. It
// reads and writes the wire types of fleet/api, which the server writes, and links no OPA:
// the CLI's --server commands and upgradescope mcp's fleet tools use it.
//
//	c, err := client.New("https://fleet.example.com", client.WithToken(tok), client.WithCAFile("ca.pem"))
//	clusters, err := c.Clusters(ctx)
//
// Every answer the caller did not ask for is an *Error carrying the server's message; its
// errors never show the token. A Client is safe for concurrent use.
package client

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

const (
	// DefaultTimeout bounds one request to the server, reading its answer included.
	DefaultTimeout = 30 * time.Second
	// MaxAnswer bounds an answer read into memory: a fleet of ten thousand clusters lists
	// in a few MB.
	MaxAnswer = 64 << 20
	// maxErrorAnswer bounds an error answer: only its message is shown.
	maxErrorAnswer = 64 << 10
)

// Labels name the client's settings in its errors and hints, as its caller's user knows
// them: the CLI passes its flags ("--server", "--read-token", …).
type Labels struct {
	Server    string // the base URL
	CAFile    string // the CA file
	Token     string // the token
	TokenFile string // where else the token may come from; "" when nowhere
}

// defaultLabels are those of a caller that gives none.
var defaultLabels = Labels{Server: "server URL", CAFile: "server CA file", Token: "the token"}

// Option configures a Client.
type Option func(*config)

type config struct {
	token, caFile string
	timeout       time.Duration
	labels        Labels
}

// WithToken sends token as the bearer of every request ("" sends none).
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithCAFile trusts the PEM certificates in file besides the system roots; the base URL
// must then be https.
func WithCAFile(file string) Option { return func(c *config) { c.caFile = file } }

// WithTimeout bounds each request, the wait for a busy server's turn included
// (DefaultTimeout when not given; 0 leaves only the context to bound it). A dry run's
// streamed answer is bounded by its context alone.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithLabels names the settings in errors and hints.
func WithLabels(l Labels) Option { return func(c *config) { c.labels = l } }

// Client calls one fleet server's API.
type Client struct {
	base   *url.URL
	token  string
	labels Labels
	http   *http.Client
	// warning is set when the token would travel in clear text.
	warning string
}

// New checks the base URL and the CA file and builds the client. The URL is the server's
// base (a path prefix is kept), without credentials, query or fragment.
func New(baseURL string, opts ...Option) (*Client, error) {
	cfg := config{timeout: DefaultTimeout, labels: defaultLabels}
	for _, o := range opts {
		o(&cfg)
	}
	l := cfg.labels
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := ""
		if err == nil {
			shown = " " + u.Redacted()
		}
		return nil, fmt.Errorf("%s%s: want an http:// or https:// URL with a host", l.Server, shown)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s %s: give the server's base URL, without credentials, query or fragment", l.Server, u.Redacted())
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.caFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("%s needs an https %s, not %s", l.CAFile, l.Server, u.Redacted())
		}
		if transport.TLSClientConfig.RootCAs, err = caPool(cfg.caFile, l.CAFile); err != nil {
			return nil, err
		}
	}
	c := &Client{base: u, token: cfg.token, labels: l, http: &http.Client{Timeout: cfg.timeout, Transport: transport,
		// A redirect would resend the token elsewhere: it is an error naming where instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if cfg.token != "" && u.Scheme == "http" && !loopback.Is(u.Hostname()) {
		c.warning = fmt.Sprintf("%s %s is plain http to a host that is not loopback: the token travels in clear text", l.Server, u)
	}
	return c, nil
}

// Warning is what the caller should tell its user before the first request: the token
// travels in clear text (plain http to a host that is not loopback). "" when nothing.
func (c *Client) Warning() string { return c.warning }

// caPool is the system roots and the PEM certificates in file, label naming the file.
func caPool(file, label string) (*x509.CertPool, error) {
	pool, err := smallfile.CertPool(file)
	switch {
	case errors.Is(err, smallfile.ErrNoCertificate):
		return nil, fmt.Errorf("%s %s: %w", label, file, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	return pool, nil
}

func (c *Client) endpoint(path ...string) string { return c.base.JoinPath(path...).String() }

// request is a request to the server's path with query, carrying the token as the bearer
// when there is one.
func (c *Client) request(ctx context.Context, method string, body io.Reader, query url.Values, path ...string) (*http.Request, error) {
	u := c.base.JoinPath(path...)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, c.endpoint(path...), err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// do sends one request (body as JSON when not nil) and decodes a want answer into out
// (when not nil); any other answer is an *Error.
func (c *Client) do(ctx context.Context, method string, body any, want int, out any, path ...string) error {
	return c.doQuery(ctx, method, body, nil, want, out, path...)
}

// doQuery is do with a query.
func (c *Client) doQuery(ctx context.Context, method string, body any, query url.Values, want int, out any, path ...string) error {
	endpoint := c.endpoint(path...)
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: encode the request: %w", method, endpoint, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := c.request(ctx, method, rd, query, path...)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The client's errors name the URL without credentials, and never a header.
		return fmt.Errorf("%s %s: %w", method, endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return c.refusal(req, resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: %s, but the answer is not the JSON expected: %w", method, endpoint, status(resp), err)
	}
	return nil
}
