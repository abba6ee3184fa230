package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Sink kinds: what a message is rendered as.
const (
	KindSlack   = "slack"
	KindWebhook = "webhook"
)

// Headers a delivery carries.
const (
	HeaderDelivery  = "X-Upgradescope-Delivery"
	HeaderEvent     = "X-Upgradescope-Event"
	HeaderSignature = "X-Upgradescope-Signature"
)

// Sink is where messages go. Name identifies its queue in the store (one sink of each kind
// today, so the kind); URL is a secret and never logged whole (Redacted).
type Sink struct {
	Name string
	Kind string
	URL  string
	// Secret, when set, signs webhook bodies: X-Upgradescope-Signature: sha256=<hex HMAC>.
	Secret string
}

// NewSlack and NewWebhook check url and build the sink.
func NewSlack(rawURL string) (Sink, error) { return newSink(KindSlack, rawURL, "") }

func NewWebhook(rawURL, secret string) (Sink, error) { return newSink(KindWebhook, rawURL, secret) }

func newSink(kind, rawURL, secret string) (Sink, error) {
	if err := CheckURL(rawURL); err != nil {
		return Sink{}, err
	}
	return Sink{Name: kind, Kind: kind, URL: rawURL, Secret: secret}, nil
}

// CheckURL accepts an absolute http or https URL with a host and, if it names a port, one
// from 1 to 65535. Its errors show the URL
// only as Redacted does.
func CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return errors.New("not a URL: want an absolute http(s) URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: want an absolute http(s) URL", Redacted(rawURL))
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%s: the URL names no host", Redacted(rawURL))
	case !validPort(u.Port()):
		return fmt.Errorf("%s: the port must be 1 to 65535", Redacted(rawURL))
	}
	return nil
}

// validPort reports whether port, a URL's port, is absent or 1 to 65535 (url.Parse takes
// any digits).
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// Redacted is a sink URL as logs show it, scheme://host/… : a webhook's path and query
// are its credential.
func Redacted(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "<URL>"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// request is the HTTP request delivering body, the stored webhook v1 body, to the sink.
func (s Sink) request(ctx context.Context, deliveryID string, body []byte) (*http.Request, error) {
	payload := body
	if s.Kind == KindSlack {
		var err error
		if payload, err = slackPayload(body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request to %s: %w", Redacted(s.URL), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "upgradescope-notify")
	req.Header.Set(HeaderDelivery, deliveryID)
	req.Header.Set(HeaderEvent, EventType)
	if s.Kind == KindWebhook && s.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(s.Secret, payload))
	}
	return req, nil
}

// Sign is the X-Upgradescope-Signature value of body: sha256=<hex HMAC-SHA256(secret, body)>.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// redactErr keeps a sink's URL out of an error: net/http's errors quote it whole.
func redactErr(err error, rawURL string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + Redacted(rawURL) + ": " + strings.ReplaceAll(ue.Err.Error(), rawURL, Redacted(rawURL))
	}
	return strings.ReplaceAll(err.Error(), rawURL, Redacted(rawURL))
}
