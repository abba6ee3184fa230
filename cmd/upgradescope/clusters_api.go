package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/output"
)

const (
	// apiTimeout bounds one request to the server, reading its answer included.
	apiTimeout = 30 * time.Second
	// maxAPIAnswer bounds an answer read into memory: a fleet of ten thousand clusters
	// lists in a few MB.
	maxAPIAnswer = 64 << 20
	// maxErrorAnswer bounds an error answer: only its message is shown.
	maxErrorAnswer = 64 << 10
)

// apiClient is a clusterBackend on a fleet server's API.
type apiClient struct {
	base *url.URL
	// token is sent as the bearer when set; tokenName is its flag, for hints. The token
	// never appears in an error.
	token, tokenName string
	http             *http.Client
	// warning is set when the token would travel in clear text.
	warning string
}

// newAPIClient checks --server and --server-ca-file and builds the client.
func newAPIClient(raw, caFile, token, tokenName string) (*apiClient, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := ""
		if err == nil {
			shown = " " + u.Redacted()
		}
		return nil, fmt.Errorf("--server%s: want an http:// or https:// URL with a host", shown)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--server %s: give the server's base URL, without credentials, query or fragment", u.Redacted())
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("--server-ca-file needs an https --server, not %s", u.Redacted())
		}
		if transport.TLSClientConfig.RootCAs, err = caPool(caFile); err != nil {
			return nil, err
		}
	}
	c := &apiClient{base: u, token: token, tokenName: tokenName, http: &http.Client{Timeout: apiTimeout, Transport: transport,
		// A redirect would resend the token elsewhere: it is an error naming where instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if token != "" && u.Scheme == "http" && !loopback.Is(u.Hostname()) {
		c.warning = fmt.Sprintf("--server %s is plain http to a host that is not loopback: the token travels in clear text", u)
	}
	return c, nil
}

// readClient is the client of a command that reads with --read-token: the token read, the
// client built, and a warning printed when the token would travel in clear text.
func readClient(s streams, server, caFile string, token tokenFlag) (*apiClient, error) {
	tok, err := token.value("read-token")
	if err != nil {
		return nil, err
	}
	c, err := newAPIClient(server, caFile, tok, "read-token")
	if err != nil {
		return nil, err
	}
	if c.warning != "" {
		fmt.Fprintln(s.err, "upgradescope:", "warning:", c.warning)
	}
	return c, nil
}

// caPool is the system roots and the PEM certificates in file.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := smallfile.Read(file, smallfile.MaxCA)
	if err != nil {
		return nil, fmt.Errorf("--server-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--server-ca-file %s: no PEM certificate in it", file)
	}
	return pool, nil
}

func (c *apiClient) list(ctx context.Context) ([]clusterJSON, error) {
	var answer struct {
		Clusters *[]clusterJSON `json:"clusters"`
	}
	if err := c.do(ctx, http.MethodGet, nil, http.StatusOK, &answer, "api", "v1", "clusters"); err != nil {
		return nil, err
	}
	if answer.Clusters == nil {
		return nil, fmt.Errorf("GET %s: the answer has no clusters list: is --server an upgradescope server?", c.endpoint("api", "v1", "clusters"))
	}
	return *answer.Clusters, nil
}

func (c *apiClient) delete(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, nil, http.StatusNoContent, nil, "api", "v1", "clusters", strconv.FormatInt(id, 10))
}

func (c *apiClient) rename(ctx context.Context, id int64, name string) (clusterJSON, error) {
	var out clusterJSON
	body := map[string]string{"name": name}
	err := c.do(ctx, http.MethodPatch, body, http.StatusOK, &out, "api", "v1", "clusters", strconv.FormatInt(id, 10))
	return out, err
}

func (c *apiClient) endpoint(path ...string) string { return c.base.JoinPath(path...).String() }

// request is a request to the server's path with query, carrying the token as the bearer
// when there is one.
func (c *apiClient) request(ctx context.Context, method string, body io.Reader, query url.Values, path ...string) (*http.Request, error) {
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
// (when not nil); any other answer is an *apiError.
func (c *apiClient) do(ctx context.Context, method string, body any, want int, out any, path ...string) error {
	endpoint := c.endpoint(path...)
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := c.request(ctx, method, rd, nil, path...)
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
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAPIAnswer)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: %s, but the answer is not the JSON expected: %w", method, endpoint, status(resp), err)
	}
	return nil
}

// apiError is an answer the command did not want: its status, and the server's message.
type apiError struct {
	method, url, status string
	code                int
	msg, hint           string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.method, e.url, e.status)
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

// Is lets commands treat a 404 and a 409 as the store's answers for the same cases.
func (e *apiError) Is(target error) bool {
	return (e.code == http.StatusNotFound && target == store.ErrNotFound) ||
		(e.code == http.StatusConflict && target == store.ErrConflict)
}

// refusal turns an unwanted answer into an *apiError with the server's {"error": …}
// message, or the start of its text when it sent no such JSON.
func (c *apiClient) refusal(req *http.Request, resp *http.Response) error {
	e := &apiError{method: req.Method, url: req.URL.Redacted(), status: status(resp), code: resp.StatusCode}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		e.msg = "redirected to " + trimmed(orDash(resp.Header.Get("Location")))
		e.hint = "redirects are not followed: point --server at the final address"
		return e
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
	var answer struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &answer) == nil && answer.Error != "" {
		e.msg = trimmed(answer.Error)
	} else {
		e.msg = trimmed(string(data))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		e.hint = c.credentialHint()
	}
	return e
}

func (c *apiClient) credentialHint() string {
	if c.token == "" {
		return "no token was sent: give --" + c.tokenName + " or --" + c.tokenName + "-file"
	}
	return "check --" + c.tokenName
}

// status is the answer's status line as the server wrote it, escaped: its text is the
// server's.
func status(resp *http.Response) string { return output.Escape(resp.Status) }

// trimmed cuts a server's message to one readable line, its control characters escaped
// (output.Escape): an error is printed on the operator's terminal.
func trimmed(msg string) string {
	r := []rune(strings.Join(strings.Fields(msg), " "))
	if len(r) > 300 {
		r = append(r[:300], '…')
	}
	return output.Escape(string(r))
}
