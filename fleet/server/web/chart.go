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
// Points are spaced by evaluation, not by time: a burst of pushes stays readable.
func ScoreChart(points []HistoryPoint, target string) string {
	var b strings.Builder
	if len(points) == 0 {
		// The empty chart still answers the page's section#history svg, with its reason.
		fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title"><title id="chart-title">No stored evaluation at Kubernetes %s yet</title>`,
			chartW, chartH/2, chartW, chartH/2, esc(target))
		fmt.Fprintf(&b, `<text class="chart-label" x="%d" y="%d">No stored evaluation at this target yet.</text></svg>`, chartLeft, chartH/4)
		return b.String()
	}
	last := points[len(points)-1]
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title"><title id="chart-title">Score at Kubernetes %s over %s, from %d to %d (latest %s)</title>`,
		chartW, chartH, chartW, chartH, esc(target), plural(len(points), "evaluation"), points[0].Score, last.Score, esc(last.Verdict))
	for _, s := range []int{0, 50, 100} {
		y := scoreY(s)
		fmt.Fprintf(&b, `<line class="chart-axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="chart-label" x="%d" y="%.1f" text-anchor="end">%d</text>`,
			chartLeft, y, chartW-chartRight, y, chartLeft-6, y+4, s)
	}
	pts := make([]string, len(points))
	for i, p := range points {
		pts[i] = fmt.Sprintf("%.1f,%.1f", pointX(i, len(points)), scoreY(p.Score))
	}
	fmt.Fprintf(&b, `<polyline class="chart-line" points="%s"/>`, strings.Join(pts, " "))
	for i, p := range points {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s, score %d</title></circle>`,
			pointX(i, len(points)), scoreY(p.Score), dotColour(p.Verdict), p.At.UTC().Format(time.DateTime), esc(p.Verdict), p.Score)
	}
	fmt.Fprintf(&b, `<text class="chart-label" x="%d" y="%d">%s</text><text class="chart-label" x="%d" y="%d" text-anchor="end">%s</text></svg>`,
		chartLeft, chartH-8, points[0].At.UTC().Format(time.DateOnly), chartW-chartRight, chartH-8, last.At.UTC().Format(time.DateOnly))
	return b.String()
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
