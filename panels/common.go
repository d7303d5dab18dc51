package panels

import (
	"time"

	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// workersOf returns the workers with role r (in Snapshot order) by pointer,
// so rows never copy the maps around.
func workersOf(s *sources.Snapshot, roles ...sources.Role) []*sources.WorkerView {
	var out []*sources.WorkerView
	for i := range s.Workers {
		for _, r := range roles {
			if s.Workers[i].Role == r {
				out = append(out, &s.Workers[i])
				break
			}
		}
	}
	return out
}

// prefillSide returns the workers that prefill: the prefill pool, or the
// unified workers when the fleet is not disaggregated.
func prefillSide(s *sources.Snapshot) ([]*sources.WorkerView, *sources.PoolView) {
	if ws := workersOf(s, sources.RolePrefill); len(ws) > 0 || s.Unified.Workers == 0 {
		return ws, &s.Prefill
	}
	return workersOf(s, sources.RoleUnified), &s.Unified
}

// decodeSide returns the workers that decode: the decode pool, or the
// unified workers when the fleet is not disaggregated.
func decodeSide(s *sources.Snapshot) ([]*sources.WorkerView, *sources.PoolView) {
	if ws := workersOf(s, sources.RoleDecode); len(ws) > 0 || s.Unified.Workers == 0 {
		return ws, &s.Decode
	}
	return workersOf(s, sources.RoleUnified), &s.Unified
}

// poolState is "2/2 up", warn-toned when some workers are not up.
func poolState(p *sources.PoolView) cell {
	s := strconv.Itoa(p.Up) + "/" + strconv.Itoa(p.Workers) + " up"
	if p.Up < p.Workers {
		return toned(s, toneWarn)
	}
	return muted(s)
}

// message is a short body (e.g. "no decode workers in this fleet"),
// centred, wrapped at spaces when wider than the panel.
func message(c *drawCtx, text string) []string {
	if c.print {
		return []string{paint(c.st, toneMuted, text)}
	}
	lines := make([]string, c.h)
	wrapped := []string{text}
	if width(text) > c.w {
		wrapped = splitWords(text, c.w)
	}
	top := (c.h - 1) / 2
	if len(wrapped) > 1 {
		top = max(0, (c.h-len(wrapped))/2)
	}
	for i, l := range wrapped {
		if top+i < c.h {
			lines[top+i] = paint(c.st, toneMuted, center(l, c.w))
		}
	}
	return block(lines, c.w, c.h)
}

// hitCell is an actual hit ratio: the percentage, "idle" when no prompt
// tokens arrived in the window (not 0 %), or the absent mark.
func (m *marks) hitCell(h sources.HitRatio) cell {
	if !h.Since.IsZero() {
		// A restart inside the window: the figure counts the new process
		// alone (sources.HitRatio.Since).
		if !h.Present {
			m.note(markPending + " hit: too few tokens since the restart")
			return muted(markPending)
		}
		m.note(markRestart + " rows: hit since the restart")
	} else if !h.Present {
		return m.missing(h.Source)
	}
	if !sources.Finite(h.Ratio) || !sources.Finite(h.Total) {
		m.absent = true
		return muted(markAbsent)
	}
	if h.Total <= 0 {
		return muted("idle") // no lookups in the window: not 0 %
	}
	return txt(pct(h.Ratio)).val(h.Ratio)
}

// hitOf is "1.2M of 3.4M tok": the counts behind a ratio of sums.
func hitOf(h sources.HitRatio) cell {
	if !h.Present || !sources.Finite(h.Hit) || !sources.Finite(h.Total) {
		return cell{}
	}
	return muted(num(h.Hit) + " of " + num(h.Total) + " " + unitShort(h.Unit)).val(h.Total)
}

// unitShort abbreviates a hit ratio's unit.
func unitShort(u string) string {
	switch u {
	case "tokens":
		return "tok"
	case "requests":
		return "req"
	case "blocks":
		return "blk"
	}
	return u
}

// rate formats a per-second figure ("12", "0.05").
func rate(v float64) string { return num(v) }

// count formats a gauge count (requests, tokens).
func count(v float64) string { return num(v) }

// ratioPct formats a 0–1 gauge as a percentage.
func ratioPct(v float64) string { return pct(v) }

// seriesPoints returns the points of chart series name, or nil.
func seriesPoints(s *sources.Snapshot, name string) []float64 {
	if s.Charts == nil {
		return nil
	}
	return s.Charts[name].Points
}

// chartSlots is how many points a full window holds for series name.
func chartSlots(s *sources.Snapshot, name string) int {
	if s.Charts == nil {
		return 0
	}
	ser := s.Charts[name]
	if ser.Step > 0 && chartSpan(s) > 0 {
		return int(chartSpan(s) / ser.Step)
	}
	return len(ser.Points)
}

// chartSpan is the time charts and sparklines cover: the snapshot's chart
// span, or its window when the source sets none.
func chartSpan(s *sources.Snapshot) time.Duration {
	if s == nil {
		return 0
	}
	if s.ChartSpan > 0 {
		return s.ChartSpan
	}
	return s.Window
}
