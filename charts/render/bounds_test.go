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
		{"until", `{{ range until 100000000 }}{{ end }}`, "until asked for a result past upgradescope's bound"},
		{"untilStep", `{{ range untilStep 0 100000000 1 }}{{ end }}`, "untilStep asked for a result past upgradescope's bound"},
		{"seq", `{{ seq 100000000 }}`, "seq asked for a result past upgradescope's bound"},
		{"repeat", `{{ repeat 100000000 "abcdefgh" }}`, "repeat asked for a result past upgradescope's bound"},
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
