package render

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func TestTheBoundedFunctionsAnswerAsSprigsWithinTheBound(t *testing.T) {
	ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{"cm.yaml": `data:
  until: {{ until 3 | join "," | quote }}
  untilStep: {{ untilStep 10 0 -5 | join "," | quote }}
  seq: {{ seq 2 5 | quote }}
  repeat: {{ repeat 3 "ab" | quote }}
`}}.Build()
	caps, err := Capabilities("1.36", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := renderFiles(context.Background(), ch, nil, Release{Name: "web", Namespace: "shop"}, caps)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`until: "0,1,2"`, `untilStep: "10,5"`, `seq: "2 3 4 5"`, `repeat: "ababab"`} {
		if !strings.Contains(got["web/templates/cm.yaml"], want) {
			t.Fatalf("rendered %q, want %s", got["web/templates/cm.yaml"], want)
		}
	}
}

func TestARenderingPastItsTimeIsAbandonedWithAnError(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_, err := within(context.Background(), 100*time.Millisecond, func() (map[string]string, error) {
		<-release
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 100ms") {
		t.Fatalf("err = %v, want the time named", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %s", d)
	}
}

func TestARenderingEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release := make(chan struct{})
	defer close(release)
	if _, err := within(ctx, time.Minute, func() (map[string]string, error) { <-release; return nil, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestAnAbandonedRenderingStopsAtItsNextFunctionCall(t *testing.T) {
	renderTime = 300 * time.Millisecond
	defer func() { renderTime = MaxRenderTime }()
	before := runtime.NumGoroutine()
	ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{
		"t.yaml": `{{ range until 100000 }}{{ range until 100000 }}{{ $x := add 1 1 }}{{ end }}{{ end }}`,
	}}.Build()
	caps, err := Capabilities("1.36", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := renderFiles(context.Background(), ch, nil, Release{Name: "web", Namespace: "shop"}, caps); err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Fatalf("err = %v, want the time named", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines, %d before: the abandoned rendering runs on", n, before)
	}
}
