package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// Every answer other than success goes through writeError, and every handler error
// through answer: one JSON shape, one place that decides what a user is told.

// apiError is an answer other than success: its status and the message users read.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func fail(status int, msg string) error { return &apiError{status, msg} }

// retryAfterS is the Retry-After every 503 carries.
const retryAfterS = "5"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="upgradescope"`)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterS)
	}
	writeJSON(w, status, api.ErrorBody{Error: msg})
}

// answer turns a handler's error into its response: an apiError as it says, an
// unavailable store as 503, anything else as 500 with the detail only in the log.
func answer(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var busy *admission.Refusal
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.msg)
	case errors.As(err, &busy):
		writeError(w, http.StatusServiceUnavailable, busy.Error())
	case errors.Is(err, store.ErrUnavailable):
		log.Warn("store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, "store unavailable, retry later")
	default:
		log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

// readFunc is a read route: it answers with the scope the read credential middleware
// found, or fails with an error answer turns into the response.
type readFunc func(w http.ResponseWriter, r *http.Request, sc scope) error

// scoped adapts f to an http.Handler below the read credential middleware.
func scoped(log *slog.Logger, f readFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r, scopeOf(r)); err != nil {
			answer(log, w, r, err)
		}
	})
}

// answering adapts f to an http.Handler whose error answer turns into the response.
func answering(log *slog.Logger, f func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			answer(log, w, r, err)
		}
	})
}

// bearer is the request's bearer token ("" when none); the scheme is case-insensitive.
func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}
