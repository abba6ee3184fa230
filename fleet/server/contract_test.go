package server_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/apitest"
)

var (
	specOnce sync.Once
	spec     *apitest.Spec
)

// checkContract validates every real response a test receives against docs/openapi.yaml,
// so the published document cannot drift from the server.
func checkContract(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	specOnce.Do(func() { spec = apitest.Load(t, "../../docs/openapi.yaml") })
	if spec == nil {
		t.Fatal("docs/openapi.yaml did not load")
	}
	spec.Check(t, req, status, header, body)
}
