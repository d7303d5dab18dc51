package panels

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// sparkRunes are the eight bar heights of a one-line trend.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline draws pts (oldest first, NaN = gap) as one line of w block
// characters, right-aligned in a window of slots points, scaled to [0, hi].
// Gaps are spaces; non-finite points never reach the arithmetic.
func sparkline(pts []float64, slots, w int, hi float64) string {
	if w <= 0 {
		return ""
	}
	if !(hi > 0) || math.IsInf(hi, 0) {
		hi = 1
	}
	vals := resample(pts, slots, w)
	var b strings.Builder
	b.WriteString(spaces(w - len(vals)))
	for _, v := range vals {
		if v != v || math.IsInf(v, 0) {
			b.WriteByte(' ')
			continue
		}
		i := int(math.Ceil(v/hi*8)) - 1
		b.WriteRune(sparkRunes[clamp(i, 0, 7)])
	}
	return b.String()
}

// trend is a column of sparklines of one History signal across workers,
// all on one scale so rows compare (hi = 0: the largest point shown).
type trend struct {
	sig   sources.Signal
	w     int
	slots int
	hi    float64
}

// newTrend sizes a trend column for a panel of width pw: none below 100
// cells, wider as the panel grows.
func newTrend(s *sources.Snapshot, sig sources.Signal, pw int, ws []*sources.WorkerView, hi float64) *trend {
	if pw < 100 {
		return nil
	}
	t := &trend{sig: sig, w: clamp((pw-90)/2, 8, 30), hi: hi, slots: historySlots(s)}
	any := false
	for _, w := range ws {
		for _, v := range w.History[sig] {
			if sources.Finite(v) {
				any = true
				if hi == 0 && v > t.hi {
					t.hi = v
				}
			}
		}
	}
	if !any {
		return nil
	}
	return t
}

// trend is newTrend for this render; none when printing (a few seconds
// of history draw nothing useful).
func (c *drawCtx) trend(sig sources.Signal, ws []*sources.WorkerView, hi float64) *trend {
	if c.print {
		return nil
	}
	return newTrend(c.s, sig, c.w, ws, hi)
}

// cell is w's trend, muted.
func (t *trend) cell(w *sources.WorkerView) cell {
	if t == nil {
		return cell{}
	}
	pts := w.History[t.sig]
	if len(pts) == 0 {
		return cell{}
	}
	return muted(sparkline(pts, t.slots, t.w, t.hi))
}

// poolHistory combines the workers' History of sig tick by tick (aligned
// at the newest point): the sum, or the max, of the finite values; NaN
// where no worker has one.
func poolHistory(ws []*sources.WorkerView, sig sources.Signal, useMax bool) []float64 {
	n := 0
	for _, w := range ws {
		n = max(n, len(w.History[sig]))
	}
	if n == 0 {
		return nil
	}
	out := make([]float64, n)
	seen := make([]bool, n)
	for _, w := range ws {
		h := w.History[sig]
		off := n - len(h)
		for i, v := range h {
			if !sources.Finite(v) {
				continue
			}
			j := off + i
			switch {
			case !seen[j]:
				out[j] = v
			case useMax:
				out[j] = math.Max(out[j], v)
			default:
				out[j] += v
			}
			seen[j] = true
		}
	}
	for i := range out {
		if !seen[i] {
			out[i] = math.NaN()
		}
	}
	return out
}

// historySlots is how many History points a full window holds. The store
// samples History on the chart steps, so the charts' step decides; without
// charts, one point per refresh interval.
func historySlots(s *sources.Snapshot) int {
	span := chartSpan(s)
	if span <= 0 {
		return 0
	}
	for _, name := range []string{"output_tps", "input_tps", "itl_p50", "hit_actual"} {
		if ser, ok := s.Charts[name]; ok && ser.Step > 0 {
			return int(span / ser.Step)
		}
	}
	if s.Interval > 0 {
		return int(span / s.Interval)
	}
	return 0
}
