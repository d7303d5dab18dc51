package panels

import (
	"math"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// markSeries is the plot cell owner of a restart marker.
const markSeries = -2

// chartMark is an event drawn on a chart: how long before the chart's
// right edge ("now") it happened.
type chartMark struct {
	age time.Duration
}

// restartMarks returns the restarts (and freshly started workers
// joining) inside the snapshot's chart span, for every chart: a restart
// explains a cold cache, a dip in throughput or a latency spike, wherever
// it shows.
func restartMarks(s *sources.Snapshot) []chartMark {
	if s == nil {
		return nil
	}
	var out []chartMark
	span := chartSpan(s)
	fresh := map[string]bool{}
	for i := range s.Targets {
		fresh[s.Targets[i].ID] = s.Targets[i].FreshStart
	}
	for _, e := range s.Events {
		// A worker joining already busy (discovered at start) is no start.
		if e.Kind != "restart" && !(e.Kind == "joined" && fresh[e.TargetID]) {
			continue
		}
		if age := s.Time.Sub(e.Time); age >= 0 && age <= span {
			out = append(out, chartMark{age: age})
		}
	}
	return out
}

// markCols returns the plot columns (0 … w−1) of the chart's marks; marks
// outside the window are dropped, two in one column drawn once.
func (c *chart) markCols(w int) []int {
	if w <= 1 || c.window <= 0 || len(c.marks) == 0 {
		return nil
	}
	seen := map[int]bool{}
	var out []int
	for _, m := range c.marks {
		f := 1 - float64(m.age)/float64(c.window)
		if f < 0 || f > 1 {
			continue
		}
		x := int(math.Round(f * float64(w-1)))
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
