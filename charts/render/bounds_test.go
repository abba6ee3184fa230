package render_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func TestATemplateAskingForAHugeListOrStringFailsFastNamingTheBound(t *testing.T) {
	for _, tc := range []struct{ name, template, want string }{
		{"until", `{{ range until 100000000 }}{{ end }}`, "until: a list of 100000000 numbers"},
		{"untilStep", `{{ range untilStep 0 100000000 1 }}{{ end }}`, "untilStep: a list of 100000000 numbers"},
		{"seq", `{{ seq 100000000 }}`, "seq: a list of"},
		{"repeat", `{{ repeat 100000000 "abcdefgh" }}`, "repeat: 100000000 copies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{"t.yaml": tc.template}}.Build()
			start := time.Now()
			_, err := render.APIs(context.Background(), ch, nil, rel, "1.36", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to name %q", err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the refusal took %s", d)
			}
		})
	}
}
