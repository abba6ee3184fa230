package server_test

import (
	"net/http"
	"testing"
)

// checkContract validates a real response against docs/openapi.yaml (wired in when the
// validator lands).
func checkContract(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {}
