package render

import (
	"context"
	"fmt"
	"math"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Bounds on one rendering. Helm's engine has none: `{{ range until 100000000 }}` in a
// template allocated 2.3 GB and ran 24 s before these. A chart comes from a repository the
// cluster already deploys from, but a scan must neither hang nor run out of memory on one.
const (
	// MaxRenderTime bounds one rendering of one chart version; past it the version is not
	// judged. Go cannot stop a running template, so the rendering goroutine is left to
	// finish on its own: the bounded functions below keep that short.
	MaxRenderTime = 20 * time.Second
	// MaxListItems bounds the lists until, untilStep and seq make.
	MaxListItems = 100_000
	// MaxRepeatBytes bounds the string repeat makes.
	MaxRepeatBytes = 1 << 20
)

// pastBound is how a bounded function's error says it refused: withhold keeps it, since it
// quotes no value.
const pastBound = "past upgradescope's bound"

// renderTime is MaxRenderTime, shortened by a test.
var renderTime = MaxRenderTime

// boundedFuncs replace the sprig functions that make a list or a string as large as a
// number in the template says, refusing one past the bounds; the template fails with the
// error, as with fail. They call sprig's own functions within the bounds.
func boundedFuncs() template.FuncMap {
	s := sprig.TxtFuncMap()
	until := s["until"].(func(int) []int)
	untilStep := s["untilStep"].(func(int, int, int) []int)
	seq := s["seq"].(func(...int) string)
	return template.FuncMap{
		"until": func(n int) ([]int, error) {
			if err := checkItems("until", 0, n, 1); err != nil {
				return nil, err
			}
			return until(n), nil
		},
		"untilStep": func(start, stop, step int) ([]int, error) {
			if err := checkItems("untilStep", start, stop, step); err != nil {
				return nil, err
			}
			return untilStep(start, stop, step), nil
		},
		"seq": func(params ...int) (string, error) {
			start, stop, step := seqSpan(params)
			if err := checkItems("seq", start, stop, step); err != nil {
				return "", err
			}
			return seq(params...), nil
		},
		"repeat": func(count int, str string) (string, error) {
			if count > 0 && float64(count)*float64(len(str)) > MaxRepeatBytes {
				return "", fmt.Errorf("repeat: %s of %d bytes", pastBound, MaxRepeatBytes)
			}
			return s["repeat"].(func(int, string) string)(count, str), nil
		},
	}
}

// checkItems refuses a range from start to stop by step holding more than MaxListItems
// numbers; the step's sign is ignored, which over-counts only ranges sprig makes empty.
func checkItems(name string, start, stop, step int) error {
	if step == 0 {
		step = 1
	}
	items := math.Abs(float64(stop)-float64(start)) / math.Abs(float64(step))
	if items > MaxListItems {
		return fmt.Errorf("%s: %s of %d numbers", name, pastBound, MaxListItems)
	}
	return nil
}

// seqSpan is the range sprig's seq counts over, as its arguments read (end; start end;
// start step end).
func seqSpan(params []int) (start, stop, step int) {
	switch len(params) {
	case 1:
		return 1, params[0], 1
	case 2:
		return params[0], params[1], 1
	case 3:
		return params[0], params[2], params[1]
	}
	return 0, 0, 1
}

// within runs render and returns its result, or an error once limit passes or ctx ends;
// a rendering still running then is abandoned (see MaxRenderTime).
func within(ctx context.Context, limit time.Duration, render func() (map[string]string, error)) (map[string]string, error) {
	type result struct {
		files map[string]string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("template panicked: %v", p)}
			}
		}()
		files, err := render()
		done <- result{files, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.files, r.err
	case <-timer.C:
		return nil, fmt.Errorf("rendering did not finish within %s", limit)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
