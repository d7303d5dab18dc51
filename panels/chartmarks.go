package panels

import (
	"math"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// markSeries is the plot cell owner of a restart marker.
const markSeries = -2

// chartMark is an event drawn on a chart: how long before the chart's
// right edge ("now") it happened, and whether it was a restart or a
// worker joining.
type chartMark struct {
	age    time.Duration
	joined bool
}

// restartMarks returns the restarts and the workers joining after pdtop's
// initial discovery inside the snapshot's chart span, for every chart: a
// restart explains a cold cache, a dip in throughput or a latency spike,
// a join a step in the fleet's totals, wherever it shows. Workers found
// when pdtop started (sources.Event.Initial) are no mark.
func restartMarks(s *sources.Snapshot) []chartMark {
	if s == nil {
		return nil
	}
	var out []chartMark
	span := chartSpan(s)
	for _, e := range s.Events {
		if e.Kind != "restart" && (e.Kind != "joined" || e.Initial) {
			continue
		}
		if age := s.Time.Sub(e.Time); age >= 0 && age <= span {
			out = append(out, chartMark{age: age, joined: e.Kind == "joined"})
		}
	}
	return out
}

// markLegend explains the marks drawn at plot width w: "┊↻ restart",
// "┊↻ worker joined" or "┊↻ restart or join"; "" when none falls in the window.
func (c *chart) markLegend(w int) string {
	restart, joined := false, false
	for _, m := range c.visibleMarks(w) {
		if m.joined {
			joined = true
		} else {
			restart = true
		}
	}
	switch {
	case restart && joined:
		return "┊↻ restart or join"
	case restart:
		return "┊↻ restart"
	case joined:
		return "┊↻ worker joined"
	}
	return ""
}

// visibleMarks are the marks inside the chart's window.
func (c *chart) visibleMarks(w int) []chartMark {
	if w <= 1 || c.window <= 0 {
		return nil
	}
	var out []chartMark
	for _, m := range c.marks {
		if f := 1 - float64(m.age)/float64(c.window); f >= 0 && f <= 1 {
			out = append(out, m)
		}
	}
	return out
}

// markCols returns the plot columns (0 … w−1) of the chart's marks; marks
// outside the window are dropped, two in one column drawn once.
func (c *chart) markCols(w int) []int {
	seen := map[int]bool{}
	var out []int
	for _, m := range c.visibleMarks(w) {
		f := 1 - float64(m.age)/float64(c.window)
		x := int(math.Round(f * float64(w-1)))
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
