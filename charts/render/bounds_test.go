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

func TestATemplateDoublingAStringStopsAtTheBudget(t *testing.T) {
	for _, tc := range []struct{ name, template string }{
		{"print", `{{ $s := "x" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}`},
		{"printf", `{{ $s := "x" }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}`},
		{"cat", `{{ $s := "x" }}{{ range until 40 }}{{ $s = cat $s $s }}{{ end }}`},
		{"a list", `{{ $l := list 1 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{"t.yaml": tc.template}}.Build()
			start := time.Now()
			_, err := render.APIs(context.Background(), ch, nil, rel, "1.36", nil)
			if err == nil || !strings.Contains(err.Error(), "past upgradescope's bound") {
				t.Fatalf("err = %v, want the bound named", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("the refusal took %s", d)
			}
		})
	}
}

func TestATemplateStillCannotReadTheEnvironment(t *testing.T) {
	t.Setenv("UPGRADESCOPE_TEST_SECRET", "s3cret")
	for _, fn := range []string{"env", "expandenv"} {
		ch := charttest.Chart{Name: "web", Version: "1.0.0", Templates: map[string]string{
			"t.yaml": `{{ ` + fn + ` "UPGRADESCOPE_TEST_SECRET" }}`,
		}}.Build()
		if _, err := render.APIs(context.Background(), ch, nil, rel, "1.36", nil); err == nil {
			t.Fatalf("%s rendered: a chart can read the environment", fn)
		}
	}
}
