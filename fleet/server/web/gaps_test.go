package web

import (
	"strings"
	"testing"
)

func TestAnUnknownVerdictsScoreReadsNotAssessed(t *testing.T) {
	for v, want := range map[string]string{"unknown": ">n/a (not assessed)<", "ready": "100", "blocked": "100"} {
		if got := scoreText(v, 100); !strings.Contains(got, want) || v == "unknown" && strings.Contains(got, "100") {
			t.Errorf("a %s verdict's score reads %q, want %q", v, got, want)
		}
	}
}
