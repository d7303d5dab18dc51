package panels

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	tslc "github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/lipgloss"
	"github.com/pdtop/pdtop/themes"
)

// The chart adapter keeps ntcharts away from everything that crashes or
// hangs it (reference/robustness.md §4): non-finite points become gaps
// (each finite run is its own data set, so no line is drawn across a gap),
// extremes are clamped, a zero Y range is widened, no chart is created
// smaller than 1×1, auto-ranging is off (a chart is rebuilt per render, so
// no max is ever pinned), and drawing runs under recover. ntcharts draws
// each series' braille; the adapter overlays the series cell by cell and
// renders runs of equal style itself (one lipgloss call per run, not per
// cell), with its own axis labels.

// chartClamp bounds plotted values; anything larger is drawn at the limit.
const chartClamp = 1e12

// chartLine is one series on a chart.
type chartLine struct {
	label  string    // legend name, e.g. "p99"
	points []float64 // oldest first, one per step, NaN = gap
	style  lipgloss.Style
	dashed bool // drawn with gaps every third cell (predictions)
}

// chart is a small line chart of 1–4 series over the time window.
type chart struct {
	title  string               // e.g. "ITL"
	unit   string               // e.g. "s", shown after the title
	lines  []chartLine          // drawn in order; later lines on top
	format func(float64) string // axis labels and legend values
	fixed  bool                 // use [lo, hi] instead of the data's range
	lo, hi float64
	window time.Duration // time a full window of slots spans ("−5m")
	slots  int           // points in a full window (0 = longest series)
}

// minChartH and minChartW are the smallest sizes that draw a plot.
const (
	minChartH = 4
	minChartW = 20
)

// render draws the chart in exactly h lines of w cells: a legend line,
// h−2 plot rows with Y labels, and the time axis. Below the minimum size
// only the legend line is drawn.
func (c *chart) render(st *themes.Styles, w, h int) (out []string) {
	if w <= 0 || h <= 0 {
		return block(nil, w, h)
	}
	defer func() {
		if r := recover(); r != nil {
			out = block([]string{paint(st, toneCrit, "chart error: "+clean(fmt.Sprint(r), 80))}, w, h)
		}
	}()
	if c.format == nil {
		c.format = num
	}
	legend := c.legend(st, w)
	if h < minChartH || w < minChartW {
		return block([]string{legend}, w, h)
	}
	lo, hi, any := c.yrange()
	plotH := h - 2
	labels := make([]string, plotH)
	labels[0] = c.format(hi)
	labels[plotH-1] = c.format(lo)
	if plotH >= 5 {
		// The middle value is drawn on this row (4 braille dots per row).
		labels[plotH-1-(4*plotH-1)/8] = c.format((lo + hi) / 2)
	}
	gw := 0
	for _, l := range labels {
		gw = max(gw, width(l))
	}
	plotW := w - gw - 1
	if plotW < 4 {
		return block([]string{legend}, w, h)
	}
	var rows []string
	if any {
		rows = c.plot(st, plotW, plotH, lo, hi)
	} else {
		rows = make([]string, plotH)
		rows[(plotH-1)/2] = paint(st, toneMuted, center("no data in window", plotW))
	}
	out = make([]string, 0, h)
	out = append(out, legend)
	for i := 0; i < plotH; i++ {
		axis := "│"
		if labels[i] != "" {
			axis = "┤"
		}
		out = append(out, st.Muted.Render(fitLeft(labels[i], gw)+axis)+fit(rows[i], plotW))
	}
	out = append(out, spaces(gw+1)+c.timeAxis(st, plotW))
	return block(out, w, h)
}

// legend is "ITL (s)  ─ p50 32ms  ─ p99 80ms": each series' glyph, name and
// latest value, fitted to w.
func (c *chart) legend(st *themes.Styles, w int) string {
	parts := []string{st.Header.Render(c.title)}
	if c.unit != "" {
		parts[0] += st.Muted.Render(" (" + c.unit + ")")
	}
	for _, l := range c.lines {
		glyph := "──"
		if l.dashed {
			glyph = "╌╌"
		}
		v := markAbsent
		if x, ok := lastFinite(l.points); ok {
			v = c.format(x)
		}
		parts = append(parts, l.style.Render(glyph)+" "+l.label+" "+v)
	}
	s, _ := joinLine(parts, "  ", w)
	return s
}

// timeAxis is "−5m … now" across the plot width.
func (c *chart) timeAxis(st *themes.Styles, w int) string {
	left := "−" + span(c.window)
	if c.window <= 0 {
		left = ""
	}
	right := "now"
	if width(left)+width(right)+1 > w {
		return st.Muted.Render(fitLeft(right, w))
	}
	return st.Muted.Render(left + spaces(w-width(left)-width(right)) + right)
}

// yrange returns the Y range to draw: fixed, or from 0 (or the data's
// minimum when negative) to a rounded-up maximum; never empty or
// non-finite. any is false when no series has a finite point.
func (c *chart) yrange() (lo, hi float64, any bool) {
	dmin, dmax := math.Inf(1), math.Inf(-1)
	for _, l := range c.lines {
		for _, v := range l.points {
			if v != v || math.IsInf(v, 0) {
				continue
			}
			v = math.Max(-chartClamp, math.Min(chartClamp, v))
			dmin, dmax = math.Min(dmin, v), math.Max(dmax, v)
			any = true
		}
	}
	if c.fixed && c.hi > c.lo && finite2(c.lo, c.hi) {
		return c.lo, c.hi, any
	}
	if !any {
		return 0, 1, false
	}
	lo, hi = math.Min(0, dmin), dmax
	if hi > 0 {
		hi = niceCeil(hi)
	}
	if !(hi > lo) {
		d := math.Abs(hi) * 0.1
		if d == 0 {
			d = 1
		}
		hi += d
	}
	return lo, hi, true
}

// niceCeil rounds v > 0 up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if p*m >= v*(1-1e-9) {
			return p * m
		}
	}
	return v
}

func finite2(a, b float64) bool {
	return !math.IsNaN(a) && !math.IsNaN(b) && !math.IsInf(a, 0) && !math.IsInf(b, 0)
}

// lastFinite returns the newest finite point.
func lastFinite(p []float64) (float64, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if v := p[i]; v == v && !math.IsInf(v, 0) {
			return v, true
		}
	}
	return 0, false
}

// resample places points right-aligned in a window of max(len, slots)
// positions and averages them down to at most n buckets (NaN where a
// bucket holds no finite point).
func resample(points []float64, slots, n int) []float64 {
	s := max(len(points), slots)
	if s <= 0 || n <= 0 {
		return nil
	}
	shift := s - len(points)
	if s <= n {
		out := make([]float64, s)
		for i := range out {
			out[i] = math.NaN()
		}
		for i, v := range points {
			out[shift+i] = v
		}
		return out
	}
	sum := make([]float64, n)
	cnt := make([]int, n)
	for i, v := range points {
		if v != v || math.IsInf(v, 0) {
			continue
		}
		b := (shift + i) * n / s
		sum[b] += v
		cnt[b]++
	}
	out := make([]float64, n)
	for i := range out {
		if cnt[i] == 0 {
			out[i] = math.NaN()
		} else {
			out[i] = sum[i] / float64(cnt[i])
		}
	}
	return out
}

// plotCell is one cell of the overlaid plot: a braille rune and the series
// that drew it last (−1 for none).
type plotCell struct {
	r rune
	s int
}

// plot draws every series with ntcharts and overlays them into plotH rows
// of plotW cells.
func (c *chart) plot(st *themes.Styles, plotW, plotH int, lo, hi float64) []string {
	grid := make([][]plotCell, plotH)
	for y := range grid {
		grid[y] = make([]plotCell, plotW)
		for x := range grid[y] {
			grid[y][x].s = -1
		}
	}
	for si, l := range c.lines {
		pts := resample(l.points, c.slots, 2*plotW)
		if len(pts) == 0 {
			continue
		}
		cells := drawSeries(pts, plotW, plotH, lo, hi)
		for y := 0; y < plotH; y++ {
			for x := 0; x < plotW; x++ {
				r := cells[y][x]
				if r == 0 {
					continue
				}
				if l.dashed && x%3 == 2 && x > 0 && x+1 < plotW && cells[y][x-1] != 0 && cells[y][x+1] != 0 {
					continue
				}
				g := &grid[y][x]
				if g.s >= 0 {
					r = runes.CombineBraillePatterns(g.r, r)
				}
				g.r, g.s = r, si
			}
		}
	}
	rows := make([]string, plotH)
	var b, run strings.Builder
	for y := range grid {
		b.Reset()
		cur := -2
		flush := func() {
			if run.Len() == 0 {
				return
			}
			if cur >= 0 && cur < len(c.lines) {
				b.WriteString(c.lines[cur].style.Render(run.String()))
			} else {
				b.WriteString(run.String())
			}
			run.Reset()
		}
		for _, g := range grid[y] {
			if g.s != cur {
				flush()
				cur = g.s
			}
			if g.s < 0 {
				run.WriteByte(' ')
			} else {
				run.WriteRune(g.r)
			}
		}
		flush()
		rows[y] = b.String()
	}
	return rows
}

// drawSeries draws one resampled series (x = index) as braille with an
// ntcharts time-series chart and returns its runes, [y][x], 0 = empty.
// Every point is finite and inside [lo, hi] before it reaches ntcharts.
func drawSeries(pts []float64, w, h int, lo, hi float64) [][]rune {
	out := make([][]rune, h)
	for y := range out {
		out[y] = make([]rune, w)
	}
	if w < 1 || h < 2 || !(hi > lo) || !finite2(lo, hi) {
		return out
	}
	x0, x1 := int64(0), int64(len(pts)-1)
	if x1 == 0 {
		x0 = -1 // a single point sits at the right edge ("now")
	}
	// ntcharts scales values to h−1 rows of an h-row braille grid when
	// axes are off; stretching the range by h/(h−1) uses the top row too.
	top := lo + (hi-lo)*float64(h-1)/float64(h)
	m := tslc.New(w, h,
		tslc.WithXYSteps(0, 0),
		tslc.WithTimeRange(time.Unix(x0, 0), time.Unix(x1, 0)),
		tslc.WithYRange(lo, top))
	m.AutoMinX, m.AutoMaxX, m.AutoMinY, m.AutoMaxY = false, false, false, false
	var names []string
	seg := -1
	for i, v := range pts {
		if v != v || math.IsInf(v, 0) {
			seg = -1
			continue
		}
		if seg < 0 {
			seg = len(names)
			names = append(names, "s"+strconv.Itoa(seg))
		}
		v = math.Max(lo, math.Min(hi, v))
		m.PushDataSet(names[seg], tslc.TimePoint{Time: time.Unix(int64(i), 0), Value: v})
	}
	if len(names) == 0 {
		return out
	}
	m.DrawBrailleDataSets(names)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if r := m.Canvas.Cell(canvas.Point{X: x, Y: y}).Rune; runes.IsBraillePattern(r) && r != runes.BrailleBlockOffset {
				out[y][x] = r
			}
		}
	}
	return out
}
