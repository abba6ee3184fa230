package bundles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/rest"

	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/report"
)

// IsURL says whether a --bundle source is fetched over HTTP rather than read from disk; the
// scheme is matched in any case (HTTPS://… is a URL too).
func IsURL(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

// urlLike matches a source that is meant as a URL even when it is no http(s) URL: any
// scheme://, and http or https with the colon or a slash missing (http//…, https:/…).
var urlLike = regexp.MustCompile(`(?i)^(?:[a-z][a-z0-9+.-]*://|https?:?/{1,2}[^/])`)

// looksLikeURL says whether src, which IsURL refused, was meant as a URL: it is then refused
// rather than read as a path and echoed with any credentials or token it carries.
func looksLikeURL(src string) bool {
	return urlLike.MatchString(src)
}

// checkLocal refuses a source meant as a URL that is no http(s) URL, naming it only in its
// sanitised form; a file of that name is still read.
func checkLocal(src string) error {
	if !looksLikeURL(src) {
		return nil
	}
	if _, err := os.Stat(src); err == nil && !hasSecrets(src) {
		return nil
	}
	return fmt.Errorf("bundle %s: not an http:// or https:// URL, nor a file", SanitizedURL(src))
}

// Fetched is one bundle read from a path or URL, with the bytes it was read from (what a
// bundle cache persists) and the server's ETag.
type Fetched struct {
	Source string
	Bundle *bundle.Bundle
	Raw    []byte
	ETag   string
	// Signature is report.SignatureVerified when a key checked the bundle,
	// report.SignatureNotChecked when it carries a signature read without a key, else "".
	Signature string
}

// Remote says how to reach a bundle server beyond its URL.
type Remote struct {
	// TokenFile holds a bearer token, read again for every request (so it can be rotated);
	// the token travels in a header, never in the URL.
	TokenFile string
	// CAFile is a PEM bundle trusted for https URLs besides the system roots.
	CAFile string
	// Timeout bounds one fetch from a URL as a whole (connecting, waiting, reading a body a
	// slow server trickles); 0 is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is the overall deadline of one bundle fetch from a URL.
const DefaultTimeout = 60 * time.Second

// Fetch reads one bundle from a file, a bundle directory or, with OPA's downloader, a URL. With
// vc set, a bundle that is unsigned, signed by another key or changed after signing is refused.
func Fetch(ctx context.Context, src string, remote Remote, vc *bundle.VerificationConfig) (*Fetched, error) {
	if !IsURL(src) {
		if err := checkLocal(src); err != nil {
			return nil, err
		}
	}
	if info, err := os.Stat(src); err == nil && info.IsDir() {
		return readDir(src, vc)
	}
	if !IsURL(src) {
		f, err := Open(src)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", src, err)
		}
		defer f.Close()
		raw, err := readBounded(f)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", src, err)
		}
		b, err := readChecked(raw, vc)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", src, err)
		}
		s, _ := signer(raw)
		return &Fetched{Source: src, Bundle: &b, Raw: raw, Signature: signatureState(vc, s != nil)}, nil
	}
	timeout := remote.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var got *Fetched
	trigger := plugins.TriggerManual
	d, err := NewDownloader(src, remote, vc, download.Config{Trigger: &trigger})
	if err != nil {
		return nil, err
	}
	d.WithCallback(func(_ context.Context, u download.Update) error {
		if u.Error == nil && u.Bundle != nil {
			got = &Fetched{Source: SanitizedURL(src), Bundle: u.Bundle, Raw: readAll(u.Raw), ETag: u.ETag, Signature: signatureState(vc, false)}
		}
		return nil
	})
	if err := d.Trigger(ctx); err != nil {
		if ctx.Err() != nil && parent.Err() == nil {
			return nil, fmt.Errorf("bundle %s: no bundle within %s (the fetch deadline): %w", SanitizedURL(src), timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("bundle %s: %w", SanitizedURL(src), Redact(err, src))
	}
	if got == nil {
		return nil, fmt.Errorf("bundle %s: the server sent no bundle", SanitizedURL(src))
	}
	return got, nil
}

// readDir reads a bundle directory (a checkout's policies/kb, a pack being written), tests left
// out; with vc it must hold a .signatures.json that verifies.
func readDir(dir string, vc *bundle.VerificationConfig) (*Fetched, error) {
	if err := checkManifest(dir); err != nil {
		return nil, fmt.Errorf("bundle %w", err)
	}
	b, err := ReadDir(dir, vc)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	_, err = os.Stat(filepath.Join(dir, ".signatures.json"))
	return &Fetched{Source: dir, Bundle: b, Signature: signatureState(vc, err == nil)}, nil
}

// signatureState says what was checked of a bundle read with vc (nil: no key) that carries a
// signature file or not.
func signatureState(vc *bundle.VerificationConfig, signed bool) string {
	switch {
	case vc != nil:
		return report.SignatureVerified
	case signed:
		return report.SignatureNotChecked
	}
	return ""
}

func readAll(r io.Reader) []byte {
	if r == nil {
		return nil
	}
	b, _ := io.ReadAll(r)
	return b
}

// NewDownloader is OPA's bundle downloader for one bundle URL: ETag caching, If-None-Match,
// long polling when the server offers it, jittered polling between cfg's delays, the size
// bound and, with vc, signature verification. OPA's client logs nothing.
func NewDownloader(src string, remote Remote, vc *bundle.VerificationConfig, cfg download.Config) (*download.Downloader, error) {
	u, err := url.Parse(src)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("bundle URL %s: want http(s)://host/path", SanitizedURL(src))
	}
	if u.User != nil {
		return nil, fmt.Errorf("bundle URL %s: credentials in a URL end up in logs; use a token file", SanitizedURL(src))
	}
	if err := cfg.ValidateAndInjectDefaults(); err != nil {
		return nil, fmt.Errorf("bundle URL %s: %w", SanitizedURL(src), err)
	}
	// Every download goes through boundedClient: a response is checked against the bundle
	// bounds before OPA unpacks it, and the token file is read for each request.
	rc := map[string]any{"url": u.Scheme + "://" + u.Host, "credentials": map[string]any{"plugin": boundedPlugin}}
	if remote.TokenFile != "" {
		if err := smallfile.Check(remote.TokenFile, smallfile.MaxSecret); err != nil {
			return nil, fmt.Errorf("bundle token file: %w", err)
		}
	}
	if remote.CAFile != "" {
		if u.Scheme != "https" {
			return nil, fmt.Errorf("bundle URL %s: a CA file needs an https URL", SanitizedURL(src))
		}
		if err := smallfile.Check(remote.CAFile, smallfile.MaxCA); err != nil {
			return nil, fmt.Errorf("bundle CA file: %w", err)
		}
		rc["tls"] = map[string]any{"ca_cert": remote.CAFile, "system_ca_required": true}
	}
	raw, _ := json.Marshal(rc)
	plugin := &boundedClient{tokenFile: remote.TokenFile}
	client, err := rest.New(raw, nil, rest.Logger(logging.NewNoOpLogger()),
		rest.AuthPluginLookup(func(name string) rest.HTTPAuthPlugin {
			if name == boundedPlugin {
				return plugin
			}
			return nil
		}))
	if err != nil {
		return nil, fmt.Errorf("bundle URL %s: %w", SanitizedURL(src), Redact(err, src))
	}
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return download.New(cfg, client, path).
		WithBundleVerificationConfig(vc).
		WithSizeLimitBytes(MaxSize).
		WithBundlePersistence(true).
		WithBundleParserOpts(ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}), nil
}

// SanitizedURL is src as it may be printed or stored (errors, logs, a report's source, status
// messages): userinfo replaced by xxxxx, query and fragment cut. A source meant as a URL with
// its colon or a slash missing (http//user:pw@host/…) is sanitised as the URL it was meant as;
// a plain path is returned as it is.
func SanitizedURL(src string) string {
	if !IsURL(src) && !looksLikeURL(src) {
		return src
	}
	u, err := url.Parse(normalise(src))
	if err != nil {
		return "<unparseable URL>"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	if u.Opaque != "" {
		u.Opaque = "…"
	}
	return u.String()
}

// normalise spells a source meant as a URL (http//…, HTTPS:/…) as one, so its userinfo and
// query parse as such.
func normalise(src string) string {
	if m := regexp.MustCompile(`(?i)^(https?):?/{1,2}`).FindStringSubmatch(src); m != nil && !IsURL(src) {
		return strings.ToLower(m[1]) + "://" + src[len(m[0]):]
	}
	return src
}

// hasSecrets says whether a source carries userinfo, a query or a fragment.
func hasSecrets(src string) bool {
	u, err := url.Parse(normalise(src))
	return err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != ""
}

// Redact is err with every secret part of src (userinfo, query, fragment) cut from its
// message, however a library quoted it; errors.Is and As still see err.
func Redact(err error, src string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secretParts(src) {
		for _, form := range []string{s, strings.Trim(strconv.Quote(s), `"`), url.QueryEscape(s)} {
			if len(form) >= 1 {
				msg = strings.ReplaceAll(msg, form, "")
			}
		}
	}
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

// secretParts are the substrings of src no message may show, longest first.
func secretParts(src string) []string {
	u, err := url.Parse(normalise(src))
	if err != nil {
		return nil
	}
	var parts []string
	if u.RawQuery != "" {
		parts = append(parts, "?"+u.RawQuery, u.RawQuery)
	}
	if frag := u.EscapedFragment(); frag != "" {
		parts = append(parts, "#"+frag, frag)
	}
	if u.User != nil {
		parts = append(parts, u.User.String()+"@", u.User.String())
		if pw, ok := u.User.Password(); ok && pw != "" {
			parts = append(parts, pw)
		}
	}
	return parts
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
