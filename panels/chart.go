package panels

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/pdtop/pdtop/themes"
)

// The chart adapter keeps ntcharts away from everything that crashes or
// hangs it (reference/robustness.md §4): non-finite points become gaps (no
// line is drawn across them), extremes are clamped, a zero Y range is
// widened, no grid is created smaller than 1×1, nothing auto-ranges (the
// chart is rebuilt from the data on every render, so no max is ever
// pinned), and drawing runs under recover. ntcharts' braille grid draws
// each series; the adapter overlays the series cell by cell, ORing their
// dots, and renders runs of equal style itself (one lipgloss call per run,
// not per cell), with its own axis labels.

// chartClamp bounds plotted values; anything larger is drawn at the limit.
const chartClamp = 1e12

// chartLine is one series on a chart.
type chartLine struct {
	label string // legend name, e.g. "p99"
	short string // shorter legend name for narrow charts ("" = label)
	// beyond marks points that are only lower bounds (a quantile above
	// the top bucket): the legend's latest value reads ">5.00s".
	beyond []bool
	points []float64 // oldest first, one per step, NaN = gap
	tone   tone      // a series tone: series(i)
	dashed bool      // drawn with gaps every third cell (predictions)
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
	marks  []chartMark   // restarts: a ┊ through the plot and ↻ on the time axis
	tier   int           // the longest legend form to try (see legendTiers)
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
	legend, _ := c.legend(st, w, 0)
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
	// With the marks drawn at this width explained; when the legend has no
	// room for that, the time axis says it next to the mark.
	legend, explained := c.legend(st, w, plotW)
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
		out = append(out, paint(st, toneMuted, fitLeft(labels[i], gw)+axis)+rows[i])
	}
	out = append(out, spaces(gw+1)+c.timeAxis(st, plotW, !explained))
	return block(out, w, h)
}

// legend is "ITL (s)  ── p99 now 80ms  ── p50 now 32ms": each series'
// glyph, name and value at the right edge of the plot ("now": the latest
// chart step, not the window figure the tables show), fitted to w. When
// it does not fit it sheds, in turn, the unit, the long series names (for
// their short ones) and the per-series "now" (one "now:" after the title),
// then the title; it never drops a series silently — the last resort ends
// in "…". When a plot plotW wide draws restart marks, the legend ends with
// what they mean ("┊↻ restart") if some form has room for it; explained is
// false when there are marks and none has.
func (c *chart) legend(st *themes.Styles, w, plotW int) (line string, explained bool) {
	if m := c.markLegend(plotW); m != "" {
		m = "  " + paint(st, toneWarn, m)
		for i := c.tier; i < len(legendTiers); i++ {
			// Never at the cost of the title: the axis can say it instead.
			if s := c.legendForm(st, legendTiers[i]) + m; legendTiers[i][0] && width(s) <= w {
				return s, true
			}
		}
		explained = false
	} else {
		explained = true
	}
	var s string
	for i := c.tier; i < len(legendTiers); i++ {
		if s = c.legendForm(st, legendTiers[i]); width(s) <= w {
			return s, explained
		}
	}
	return fit(s, w), explained // ends in "…"
}

// legendForm is the legend in one of its forms: {title, unit, short
// names, "now" per series, "now:" once when not per series}.
func (c *chart) legendForm(st *themes.Styles, form [5]bool) string {
	type entry struct{ glyph, label, short, value string }
	entries := make([]entry, len(c.lines))
	for i, l := range c.lines {
		glyph := "──"
		if l.dashed {
			glyph = "╌╌"
		}
		v := markAbsent
		if i, ok := lastFiniteAt(l.points); ok {
			v = c.format(l.points[i])
			if i < len(l.beyond) && l.beyond[i] {
				v = markBeyond + v
			}
		}
		short := l.short
		if short == "" {
			short = l.label
		}
		entries[i] = entry{paint(st, l.tone, glyph), l.label, short, v}
	}
	build := func(title, unit, short, each, once bool) string {
		var parts []string
		head := ""
		if title {
			head = paint(st, toneHeader, c.title)
			if unit && c.unit != "" {
				head += paint(st, toneMuted, " ("+c.unit+")")
			}
		}
		if !each && once && len(entries) > 0 {
			if head != "" {
				head += " "
			}
			head += paint(st, toneMuted, "now:")
		}
		if head != "" {
			parts = append(parts, head)
		}
		for _, e := range entries {
			name := e.label
			if short {
				name = e.short
			}
			if name != "" {
				name += " "
			}
			now := ""
			if each {
				now = paint(st, toneMuted, "now") + " "
			}
			parts = append(parts, e.glyph+" "+name+now+e.value)
		}
		return strings.Join(parts, "  ")
	}
	return build(form[0], form[1], form[2], form[3], form[4])
}

// legendTiers are the legend's forms, longest first: title, unit, short
// names, "now" per series, "now:" once. The title goes last: two charts
// side by side must still say which is ITL and which TTFT; "now" goes
// before it (the time axis ends in "now" anyway).
var legendTiers = [][5]bool{
	{true, true, false, true, false}, {true, false, false, true, false}, {true, false, true, true, false},
	{true, false, true, false, true}, {true, false, true, false, false}, {false, false, true, false, false},
}

// legendTier is the first legend form that fits w cells (charts drawn
// side by side use the larger of theirs, so they read alike).
func (c *chart) legendTier(st *themes.Styles, w int) int {
	for i, f := range legendTiers {
		if width(c.legendForm(st, f)) <= w {
			return i
		}
	}
	return len(legendTiers) - 1
}

// timeAxis is "last 5m … now" across the plot width ("−5m" when narrow),
// with a ↻ under each
// restart mark; label also names the newest mark ("↻ restart") where the
// axis has room, for when the legend could not.
func (c *chart) timeAxis(st *themes.Styles, w int, label bool) string {
	// Charts span at least five minutes whatever the window (a 1m window
	// still charts 5m), so the left label says how long the chart covers.
	left := "last " + span(c.window)
	if w < 30 {
		left = "−" + span(c.window)
	}
	if c.window <= 0 {
		left = ""
	}
	right := "now"
	if width(left)+width(right)+1 > w {
		return paint(st, toneMuted, fitLeft(right, w))
	}
	axis := []rune(left + spaces(w-width(left)-width(right)) + right)
	var marked []int
	for _, x := range c.markCols(w) {
		if x < len(axis) && axis[x] == ' ' {
			axis[x] = '↻'
			marked = append(marked, x)
		}
	}
	if len(marked) == 0 {
		return paint(st, toneMuted, string(axis))
	}
	if label {
		// After (else before) the newest mark with blank room for it.
		word := strings.TrimPrefix(c.markLegend(w), "┊↻ ")
		after, before := []rune(" "+word), []rune(word+" ")
		for k := len(marked) - 1; k >= 0; k-- {
			x := marked[k]
			if blank(axis, x+1, x+1+len(after)) {
				copy(axis[x+1:], after)
				return c.paintMarks(st, axis, marked, x, x+1+len(after))
			}
			if from := x - len(before); blank(axis, from-1, x-1) {
				copy(axis[from:], before)
				return c.paintMarks(st, axis, marked, from, x+1)
			}
		}
	}
	return c.paintMarks(st, axis, marked, -1, -1)
}

// blank reports whether axis[from:to+1] is inside the axis and all
// spaces (a label keeps a space from "−5m" and "now").
func blank(axis []rune, from, to int) bool {
	if from < 0 || to >= len(axis) {
		return false
	}
	for _, r := range axis[from : to+1] {
		if r != ' ' {
			return false
		}
	}
	return true
}

// paintMarks draws the axis with the ↻ marks and the label in
// axis[labelFrom:labelTo] (labelFrom −1: none) in the warning tone, the
// rest muted.
func (c *chart) paintMarks(st *themes.Styles, axis []rune, marked []int, labelFrom, labelTo int) string {
	warn := make([]bool, len(axis))
	for _, x := range marked {
		warn[x] = true
	}
	for x := max(labelFrom, 0); labelFrom >= 0 && x < labelTo; x++ {
		warn[x] = true
	}
	var b strings.Builder
	for from := 0; from < len(axis); {
		to := from
		for to < len(axis) && warn[to] == warn[from] {
			to++
		}
		t := toneMuted
		if warn[from] {
			t = toneWarn
		}
		b.WriteString(paint(st, t, string(axis[from:to])))
		from = to
	}
	return b.String()
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
		hi = niceCeil(hi * 1.02) // a little headroom: a flat line is not drawn on the top edge
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

// niceCeil rounds v > 0 up to a round number: 1, 1.2, 1.5, 2, 2.5, 3, 4,
// 5, 6 or 8 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if p*m >= v*(1-1e-9) {
			return p * m
		}
	}
	return v
}

func finite2(a, b float64) bool {
	return !math.IsNaN(a) && !math.IsNaN(b) && !math.IsInf(a, 0) && !math.IsInf(b, 0)
}

// lastFiniteAt is the index of the last finite point.
func lastFiniteAt(p []float64) (int, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if v := p[i]; v == v && !math.IsInf(v, 0) {
			return i, true
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
	for _, x := range c.markCols(plotW) {
		for y := range grid {
			grid[y][x] = plotCell{r: '┊', s: markSeries}
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
				if g.s == markSeries {
					g.s = -1 // a line drawn over a marker hides it
				}
				if g.s >= 0 {
					r = runes.CombineBraillePatterns(g.r, r)
				}
				g.r, g.s = r, si
			}
		}
	}
	rows := make([]string, plotH)
	p := painterFor(st)
	var b, run strings.Builder
	for y := range grid {
		b.Reset()
		cur := -2
		flush := func() {
			if run.Len() == 0 {
				return
			}
			if cur >= 0 && cur < len(c.lines) {
				b.WriteString(p.paint(c.lines[cur].tone, run.String()))
			} else if cur == markSeries {
				b.WriteString(p.paint(toneMuted, run.String()))
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
			if g.s == -1 {
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

// drawSeries draws one resampled series (x = index) as braille on an
// ntcharts braille grid and returns its runes, [y][x], 0 = empty. Every
// point is finite and inside [lo, hi] before it reaches ntcharts, and
// consecutive finite points are joined; a NaN breaks the line (a gap).
//
// The grid is used directly rather than through timeserieslinechart:
// that chart allocates a w×h canvas of lipgloss.Style cells twice per
// draw (≈3.5 MB for a 190×22 plot), which made a full 200x60 frame take
// 24 ms; the braille grid is a bitmap.
func drawSeries(pts []float64, w, h int, lo, hi float64) [][]rune {
	out := make([][]rune, h)
	if w < 1 || h < 1 || !(hi > lo) || !finite2(lo, hi) {
		for y := range out {
			out[y] = make([]rune, w)
		}
		return out
	}
	x0, x1 := 0.0, float64(len(pts)-1)
	if x1 == 0 {
		x0 = -1 // a single point sits at the right edge ("now")
	}
	g := graph.NewBrailleGrid(w, h, x0, x1, lo, hi)
	var prev canvas.Point
	have := false
	for i, v := range pts {
		if v != v || math.IsInf(v, 0) {
			have = false
			continue
		}
		v = math.Max(lo, math.Min(hi, v))
		p := g.GridPoint(canvas.Float64Point{X: float64(i), Y: v})
		if !have {
			g.Set(p)
		} else {
			for _, q := range graph.GetLinePoints(prev, p) {
				g.Set(q)
			}
		}
		prev, have = p, true
	}
	pat := g.BraillePatterns()
	for y := range out {
		out[y] = make([]rune, w)
		if y >= len(pat) {
			continue
		}
		for x := 0; x < w && x < len(pat[y]); x++ {
			if r := pat[y][x]; r != runes.BrailleBlockOffset && runes.IsBraillePattern(r) {
				out[y][x] = r
			}
		}
	}
	return out
}
