package panels

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/themes"
)

func chartCases() map[string][][]float64 {
	nan, inf := math.NaN(), math.Inf(1)
	ramp := make([]float64, 900)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	return map[string][][]float64{
		"nan":       {{nan, nan, nan}, {1, nan, 2}},
		"inf":       {{inf, 1, 2, -inf, 3}, {-inf}},
		"all-equal": {{5, 5, 5, 5, 5}, {5, 5}},
		"all-zero":  {{0, 0, 0}},
		"empty":     {{}, nil},
		"single":    {{7}},
		"huge":      {{1e300, -1e300, 1e15, 3}, {math.MaxFloat64, math.SmallestNonzeroFloat64}},
		"negative":  {{-5, -3, -4}, {-1e-9, 0}},
		"long":      {ramp, ramp[:10]},
		"gappy":     {{1, nan, 3, nan, nan, 5, 6, nan}},
	}
}

// TestChartNeverPanicsOrHangs renders every awkward series at every size
// up to 60×20 and checks the output is exactly the size asked for. A
// watchdog fails the test instead of hanging it if ntcharts loops.
func TestChartNeverPanicsOrHangs(t *testing.T) {
	st := themes.Default()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for name, sers := range chartCases() {
			for _, fixed := range []bool{false, true} {
				c := &chart{title: "ITL", unit: "s", format: secs, window: 5 * time.Minute, slots: 300,
					fixed: fixed, lo: 0, hi: 1}
				for i, p := range sers {
					c.lines = append(c.lines, chartLine{label: "s" + itoa(i), points: p, tone: series(i), dashed: i == 1})
				}
				for w := 0; w <= 60; w++ {
					for h := 0; h <= 20; h++ {
						out := c.render(st, w, h)
						if len(out) != max(h, 0) {
							t.Errorf("%s %dx%d: %d lines", name, w, h, len(out))
							return
						}
						for i, l := range out {
							if width(l) != w {
								t.Errorf("%s %dx%d: line %d is %d cells: %q", name, w, h, i, width(l), l)
								return
							}
							if strings.Contains(l, "chart error") {
								t.Errorf("%s %dx%d: %s", name, w, h, l)
								return
							}
						}
					}
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("chart rendering hung")
	}
}

func TestChartAxesAndUnit(t *testing.T) {
	st := themes.Default()
	c := &chart{title: "output", unit: "tok/s", format: num, window: 5 * time.Minute, slots: 150,
		lines: []chartLine{{label: "fleet", points: []float64{1, 2, math.Inf(1), 3}, tone: series(0)}}}
	out := c.render(st, 40, 8)
	if !strings.Contains(out[0], "output (tok/s)") || !strings.Contains(out[0], "fleet now 3") {
		t.Errorf("legend must name the unit and the latest value, marked as now: %q", out[0])
	}
	last := out[len(out)-1]
	if !strings.Contains(last, "last 5m") || !strings.Contains(last, "now") {
		t.Errorf("time axis: %q", last)
	}
	// +Inf is dropped, not allowed to pin the scale: top label is 4 (3 plus headroom, rounded up).
	if !strings.HasPrefix(strings.TrimSpace(out[1]), "4┤") {
		t.Errorf("Y max should come from finite points only: %q", out[1])
	}
	if !strings.HasPrefix(strings.TrimSpace(out[len(out)-2]), "0┤") {
		t.Errorf("Y axis should start at 0: %q", out[len(out)-2])
	}
}

// TestChartGapIsNotBridged checks a NaN run leaves empty columns instead
// of a line drawn across it.
func TestChartGapIsNotBridged(t *testing.T) {
	pts := make([]float64, 40)
	for i := range pts {
		pts[i] = 1
		if i >= 15 && i < 25 {
			pts[i] = math.NaN()
		}
	}
	rows := drawSeries(pts, 20, 4, 0, 2)
	empty := 0
	for x := 0; x < 20; x++ {
		col := false
		for y := range rows {
			if rows[y][x] != 0 {
				col = true
			}
		}
		if !col {
			empty++
		}
	}
	if empty < 3 {
		t.Fatalf("expected a gap of empty columns, got %d empty columns: %q", empty, string(rows[2]))
	}
}

func TestResampleRightAligns(t *testing.T) {
	got := resample([]float64{1, 2}, 5, 10)
	if len(got) != 5 || !math.IsNaN(got[0]) || got[3] != 1 || got[4] != 2 {
		t.Fatalf("resample = %v", got)
	}
	got = resample([]float64{1, 3, 5, 7}, 4, 2)
	if len(got) != 2 || got[0] != 2 || got[1] != 6 {
		t.Fatalf("resample average = %v", got)
	}
}

func TestSparkline(t *testing.T) {
	s := sparkline([]float64{0, 0.5, 1, math.NaN(), math.Inf(1)}, 5, 5, 1)
	if width(s) != 5 || !strings.HasPrefix(s, "▁▄█") {
		t.Fatalf("sparkline = %q", s)
	}
	if got := sparkline(nil, 0, 4, 0); got != "    " {
		t.Fatalf("empty sparkline = %q", got)
	}
}

// TestChartExplainsItsMarks: a chart that draws restart or join marks
// says what they are — in its legend, or on the time axis when the legend
// has no room — and one with marks outside its window says nothing.
func TestChartExplainsItsMarks(t *testing.T) {
	st := themes.NewStyles(themes.Mono())
	pts := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	c := &chart{title: "output", unit: "tok/s", format: num, window: 5 * time.Minute, slots: 8,
		lines: []chartLine{{label: "fleet", points: pts, tone: series(0)}},
		marks: []chartMark{{age: 2 * time.Minute, joined: true}}}
	out := strings.Join(c.render(st, 80, 8), "\n")
	if !strings.Contains(out, "┊↻ worker joined") || !strings.Contains(out, "↻") {
		t.Errorf("join mark not explained in the legend:\n%s", out)
	}
	c.marks = append(c.marks, chartMark{age: time.Minute})
	if out := strings.Join(c.render(st, 80, 8), "\n"); !strings.Contains(out, "┊↻ restart or join") {
		t.Errorf("restart and join marks:\n%s", out)
	}
	c.title = "a chart whose title and series leave no room in the legend"
	lines := c.render(st, 70, 8)
	if axis := lines[len(lines)-1]; !strings.Contains(axis, "restart or join") || strings.Contains(lines[0], "restart") {
		t.Errorf("a narrow legend: the axis should name the mark:\n%s", strings.Join(lines, "\n"))
	}
	c.marks = []chartMark{{age: 10 * time.Minute}}
	if out := strings.Join(c.render(st, 80, 8), "\n"); strings.Contains(out, "↻") {
		t.Errorf("a mark outside the window is drawn or explained:\n%s", out)
	}
}

// TestChartLegendKeepsEverySeries checks that a narrow chart sheds words,
// never a series: the KV transfer chart at a 200x60 grid cell (62 cells
// inside) lost "decode transfer", the line actually plotted.
func TestChartLegendKeepsEverySeries(t *testing.T) {
	st := themes.Default()
	c := &chart{title: "KV transfer queues", unit: "req", format: num, window: 5 * time.Minute,
		lines: []chartLine{
			{label: "prefill in-flight", short: "prefill", points: []float64{0}, tone: series(0)},
			{label: "decode transfer", short: "decode", points: []float64{12}, tone: series(1), dashed: true},
		}}
	for w, want := range map[int][]string{
		100: {"KV transfer queues (req)", "prefill in-flight now 0", "decode transfer now 12"},
		62:  {"KV transfer queues", "prefill now 0", "decode now 12"},
		52:  {"KV transfer queues now:", "prefill 0", "decode 12"},
		47:  {"KV transfer queues  ── prefill 0", "decode 12"},
		45:  {"prefill 0", "decode 12"},
	} {
		l, _ := c.legend(st, w, 0)
		if width(l) > w {
			t.Errorf("%d: legend is %d cells: %q", w, width(l), l)
		}
		for _, s := range want {
			if !strings.Contains(l, s) {
				t.Errorf("%d: legend %q lacks %q", w, l, s)
			}
		}
	}
	if l, _ := c.legend(st, 12, 0); !strings.HasSuffix(strings.TrimRight(l, " "), "…") {
		t.Errorf("a legend cut short must end in …: %q", l)
	}
}
