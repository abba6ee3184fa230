package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/output"
)

// ErrNotFound and ErrConflict match an *Error of a 404 (an unknown cluster) and a 409 (a
// name another cluster holds) with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Error is an answer the caller did not want: the request, the status, and the server's
// message. Its text is the server's, escaped and cut to one line: it is printed on a
// terminal.
type Error struct {
	Method string
	// URL is the request's, without credentials (and without its query for a gate).
	URL string
	// Status is the status line as the server wrote it; StatusCode its code.
	Status     string
	StatusCode int
	// Message is the server's {"error": …}, or the start of its text when it sent none.
	Message string
	// Hint says what to do next, when there is something to say: a credential to give or
	// check, an address to point at instead of a redirect.
	Hint string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Is matches ErrNotFound for a 404 and ErrConflict for a 409.
func (e *Error) Is(target error) bool {
	return (e.StatusCode == http.StatusNotFound && target == ErrNotFound) ||
		(e.StatusCode == http.StatusConflict && target == ErrConflict)
}

// refusal turns an unwanted answer into an *Error with the server's message.
func (c *Client) refusal(req *http.Request, resp *http.Response) error {
	e := &Error{Method: req.Method, URL: req.URL.Redacted(), Status: status(resp), StatusCode: resp.StatusCode}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		location := resp.Header.Get("Location")
		if location == "" {
			location = "-"
		}
		e.Message = "redirected to " + trimmed(location)
		e.Hint = "redirects are not followed: point " + c.labels.Server + " at the final address"
		return e
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
	var answer api.ErrorBody
	if json.Unmarshal(data, &answer) == nil && answer.Error != "" {
		e.Message = trimmed(answer.Error)
	} else {
		e.Message = trimmed(string(data))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		e.Hint = c.credentialHint()
	}
	return e
}

func (c *Client) credentialHint() string {
	l := c.labels
	switch {
	case c.token != "":
		return "check " + l.Token
	case l.TokenFile != "":
		return "no token was sent: give " + l.Token + " or " + l.TokenFile
	}
	return "no token was sent: give " + l.Token
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
