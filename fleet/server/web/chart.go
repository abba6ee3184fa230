package web

import (
	"fmt"
	"strings"
	"time"
)

// Chart geometry: a 0–100 score axis and time along x, in viewBox units.
const (
	chartW, chartH         = 640, 200
	chartLeft, chartRight  = 36, 12
	chartTop, chartBottom  = 10, 28
	chartPlotW, chartPlotH = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
)

// ScoreChart draws the score history as an SVG line (oldest left), with the 0/50/100 grid,
// first and last dates, and a dot per evaluation titled with its date, verdict and score.
// Points are spaced by evaluation, not by time: a burst of pushes stays readable. An
// evaluation whose verdict is not ready or blocked (unknown) has no score to plot: its score
// counts only what was assessed, so a dot at 100 would read as ready. It is a gap in the
// line marked by a dashed rule across the plot, titled "not assessed", and the chart's
// title counts it.
func ScoreChart(points []HistoryPoint, target string) string {
	var b strings.Builder
	if len(points) == 0 {
		// The empty chart still answers the page's section#history svg, with its reason.
		fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title"><title id="chart-title">No stored evaluation at Kubernetes %s yet</title>`,
			chartW, chartH/2, chartW, chartH/2, esc(target))
		fmt.Fprintf(&b, `<text class="chart-label" x="%d" y="%d">No stored evaluation at this target yet.</text></svg>`, chartLeft, chartH/4)
		return b.String()
	}
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title"><title id="chart-title">%s</title>`,
		chartW, chartH, chartW, chartH, chartTitle(points, target))
	for _, s := range []int{0, 50, 100} {
		y := scoreY(s)
		fmt.Fprintf(&b, `<line class="chart-axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="chart-label" x="%d" y="%.1f" text-anchor="end">%d</text>`,
			chartLeft, y, chartW-chartRight, y, chartLeft-6, y+4, s)
	}
	for _, run := range scoredRuns(points) {
		fmt.Fprintf(&b, `<polyline class="chart-line" points="%s"/>`, strings.Join(run, " "))
	}
	unassessed := 0
	for i, p := range points {
		x, when := pointX(i, len(points)), p.At.UTC().Format(time.DateTime)
		if !decided(p.Verdict) {
			unassessed++
			fmt.Fprintf(&b, `<line class="chart-na" x1="%.1f" y1="%d" x2="%.1f" y2="%d"><title>%s: %s, score not assessed</title></line>`,
				x, chartTop, x, chartTop+chartPlotH, when, esc(p.Verdict))
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s, score %d</title></circle>`,
			x, scoreY(p.Score), dotColour(p.Verdict), when, esc(p.Verdict), p.Score)
	}
	last := points[len(points)-1]
	fmt.Fprintf(&b, `<text class="chart-label" x="%d" y="%d">%s</text><text class="chart-label" x="%d" y="%d" text-anchor="end">%s</text>`,
		chartLeft, chartH-8, points[0].At.UTC().Format(time.DateOnly), chartW-chartRight, chartH-8, last.At.UTC().Format(time.DateOnly))
	if unassessed > 0 {
		fmt.Fprintf(&b, `<text class="chart-label" x="%d" y="%d" text-anchor="middle">dashed: not assessed</text>`, chartLeft+chartPlotW/2, chartH-8)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// chartTitle is the chart's text alternative: the scores from first to last assessed, how
// many evaluations had none, and the latest verdict.
func chartTitle(points []HistoryPoint, target string) string {
	var scored []int
	for _, p := range points {
		if decided(p.Verdict) {
			scored = append(scored, p.Score)
		}
	}
	out := fmt.Sprintf("Score at Kubernetes %s over %s", esc(target), plural(len(points), "evaluation"))
	if len(scored) > 0 {
		out += fmt.Sprintf(", from %d to %d", scored[0], scored[len(scored)-1])
	}
	if n := len(points) - len(scored); n > 0 {
		out += fmt.Sprintf(", %d not assessed (no score)", n)
	}
	last := points[len(points)-1]
	if !decided(last.Verdict) {
		return out + fmt.Sprintf(" (latest %s: not assessed)", esc(last.Verdict))
	}
	return out + fmt.Sprintf(" (latest %s)", esc(last.Verdict))
}

// scoredRuns are the line's pieces: consecutive evaluations with a score, as x,y points,
// broken where one has none.
func scoredRuns(points []HistoryPoint) [][]string {
	var runs [][]string
	var run []string
	for i, p := range points {
		if !decided(p.Verdict) {
			if len(run) > 0 {
				runs = append(runs, run)
			}
			run = nil
			continue
		}
		run = append(run, fmt.Sprintf("%.1f,%.1f", pointX(i, len(points)), scoreY(p.Score)))
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

func scoreY(score int) float64 {
	return chartTop + float64(100-min(max(score, 0), 100))*chartPlotH/100
}

func pointX(i, n int) float64 {
	if n == 1 {
		return chartLeft + chartPlotW/2
	}
	return chartLeft + float64(i)*chartPlotW/float64(n-1)
}

// dotColour repeats the verdict the dot's title says in words.
func dotColour(v string) string {
	switch v {
	case "ready":
		return "#1a7f37"
	case "blocked":
		return "#cf222e"
	}
	return "#9a6700"
}
