package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/internal/retryafter"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// A busy server's 503 is asked again after its Retry-After: at most gateAttempts requests,
// each wait at most maxGateRetryWait, defaultGateRetryWait when it does not say.
const (
	gateAttempts          = 3
	maxGateRetryWait      = time.Minute
	defaultGateRetryWait  = 5 * time.Second
	gateAnswerContentType = "application/json"
)

// GateQuery is what a gate asks the server to judge against.
type GateQuery struct {
	Target          string // the target minor, "1.37"
	FailOn          string // report.FailOnBlocker, FailOnWarning or FailOnNever
	AllowIncomplete bool   // an unknown verdict does not fail the gate
	// Cluster, when set, judges the manifests applied to this stored cluster (an id or a
	// name), failing only on what they introduce.
	Cluster string
}

// query is the gate's query: the server answers JSON, which the caller renders.
func (g GateQuery) query() url.Values {
	q := url.Values{"target": {g.Target}, "format": {output.FormatJSON}, "fail-on": {g.FailOn},
		"allow-incomplete": {strconv.FormatBool(g.AllowIncomplete)}}
	if g.Cluster != "" {
		q.Set("cluster", g.Cluster)
	}
	return q
}

// GateOption is a per-call option of Gate.
type GateOption func(*gateConfig)

type gateConfig struct {
	onRetry func(err error, wait time.Duration)
}

// OnRetry is called before a busy server is asked again, with its refusal and the wait.
func OnRetry(fn func(err error, wait time.Duration)) GateOption {
	return func(c *gateConfig) { c.onRetry = fn }
}

// Gate posts body to POST /api/v1/gate and answers the report the server judged: with a
// 200 (the gate passed) or a 422 carrying a report (it failed); the caller gates on the
// report (report.Report.Gate) as scan does. Anything else is an error: a refusal (*Error)
// with the server's message, or an answer that is no gate's (a proxy's sign-in page). A
// busy server (503) is asked again after its Retry-After, up to three requests in all.
func (c *Client) Gate(ctx context.Context, g GateQuery, body api.GateRequest, opts ...GateOption) (*report.Report, error) {
	var cfg gateConfig
	for _, o := range opts {
		o(&cfg)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	for attempt := 1; ; attempt++ {
		rep, wait, err := c.gateOnce(ctx, g.query(), data)
		if wait == 0 || attempt == gateAttempts {
			return rep, err
		}
		if cfg.onRetry != nil {
			cfg.onRetry(err, wait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// gateOnce is one request; a busy answer (503) also says how long to wait before the next.
func (c *Client) gateOnce(ctx context.Context, q url.Values, body []byte) (*report.Report, time.Duration, error) {
	req, err := c.request(ctx, http.MethodPost, bytes.NewReader(body), q, "api", "v1", "gate")
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", api.GateContentType)
	// Errors name the endpoint alone: the URL's query is the caller's business.
	where := c.endpoint("api", "v1", "gate")
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, 0, fmt.Errorf("POST %s: %w", where, err)
	}
	defer resp.Body.Close()
	bare := req.Clone(ctx)
	bare.URL.RawQuery = ""
	verdict := resp.Header.Get(api.VerdictHeader)
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		return nil, retryAfterOr(resp.Header.Get("Retry-After")), c.refusal(bare, resp)
	case resp.StatusCode != http.StatusOK && !(resp.StatusCode == http.StatusUnprocessableEntity && verdict != ""):
		return nil, 0, c.refusal(bare, resp)
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return nil, 0, fmt.Errorf("POST %s: read the answer: %w", where, err)
	}
	if len(answer) > MaxAnswer {
		return nil, 0, fmt.Errorf("POST %s: the answer is larger than %d MiB", where, MaxAnswer>>20)
	}
	if isErrorAnswer(answer) {
		// A refusal that happens to carry a verdict is still a refusal, not a report.
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		return nil, 0, c.refusal(bare, resp)
	}
	var rep report.Report
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if verdict == "" || media != gateAnswerContentType || json.Unmarshal(answer, &rep) != nil || len(rep.Targets) == 0 {
		return nil, 0, fmt.Errorf("POST %s: %s is not an upgradescope gate's answer (content type %q): is %s a fleet server?",
			where, status(resp), resp.Header.Get("Content-Type"), c.labels.Server)
	}
	return &rep, 0, nil
}

// retryAfterOr is how long a busy server asks to wait, at most maxGateRetryWait;
// defaultGateRetryWait when it does not say (or says now: a retry at once would find it as
// busy).
func retryAfterOr(h string) time.Duration {
	if d, ok := retryafter.Parse(h, time.Now(), maxGateRetryWait); ok && d > 0 {
		return d
	}
	return defaultGateRetryWait
}

// isErrorAnswer tells the server's {"error": …} answer from a report.
func isErrorAnswer(data []byte) bool {
	var answer map[string]json.RawMessage
	if json.Unmarshal(data, &answer) != nil {
		return false
	}
	_, ok := answer["error"]
	return ok && len(answer) == 1
}
