package client

import (
	"strings"
	"testing"
)

// What was not judged is never passed: an answer that ends before its summary, or holds a
// line that is neither a result nor the summary, is an error, not results.
func TestADryRunAnswerCutShortIsAnError(t *testing.T) {
	const line = `{"cluster":"prod","targets":[]}` + "\n"
	tests := []struct {
		name, body, says string
	}{
		{"no summary", line + line, "ended after 2 clusters without its summary"},
		{"cut mid-line", line + `{"clus`, "line 2 of the answer is not JSON"},
		{"a line of something else", line + `{"status":"ok"}` + "\n", "neither a cluster's result nor the summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readDryRunStream(strings.NewReader(tt.body), nil)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want one saying %q", err, tt.says)
			}
		})
	}
	results, summary, err := readDryRunStream(strings.NewReader(line+`{"summary":{"clusters":1}}`+"\n"), nil)
	if err != nil || len(results) != 1 || summary.Clusters != 1 {
		t.Errorf("a whole answer: %v, %+v, %v", results, summary, err)
	}
}
