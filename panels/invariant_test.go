package panels

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// checkBlock fails unless v is exactly h lines of exactly w cells.
func checkBlock(t *testing.T, what string, v string, w, h int) {
	t.Helper()
	if h <= 0 {
		if v != "" {
			t.Fatalf("%s: height 0 but got %q", what, v)
		}
		return
	}
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("%s: %d lines, want %d\n%s", what, len(lines), h, v)
	}
	for i, l := range lines {
		if got := lipgloss.Width(l); got != w {
			t.Fatalf("%s: line %d is %d cells, want %d: %q", what, i, got, w, l)
		}
	}
}

// weirdSnapshot is full of values that must never crash or mis-size a
// panel: NaN, ±Inf, negative and huge numbers, control characters and wide
// characters in names, empty and nil maps, a down target with no data.
func weirdSnapshot() *sources.Snapshot {
	s := sampleSnapshot()
	nan, inf := math.NaN(), math.Inf(1)
	w := &s.Workers[0]
	w.Name = "evil\x1b[31m\x07name-工作节点-ワーカー-with-a-very-long-name"
	w.Readings[sources.SigWaiting] = rd(nan, "x")
	w.Readings[sources.SigBootstrapQueue] = rd(inf, "x")
	w.Readings[sources.SigInflightQueue] = rd(-3, "x")
	w.Readings[sources.SigPromptTokens] = rd(1e300, "x")
	w.Dists[sources.SigQueueTime] = sources.Quantiles{Present: true, P50: inf, P99: nan, Mean: nan, Form: "histogram"}
	w.Hit = sources.HitRatio{Present: true, Ratio: nan, Hit: inf, Total: -1, Unit: "tokens"}
	s.Workers[1].Readings = nil
	s.Workers[1].Dists = nil
	s.Workers[1].Router = nil
	s.Workers[2].Health = sources.Down
	s.Workers[2].LastSuccess = time.Time{}
	s.Workers[2].LastError = &sources.ScrapeError{Class: sources.ErrRefused, Message: "dial tcp\nrefused\x1b[2J"}
	s.Workers[3].Readings[sources.SigKVUsage] = rd(7.5, "x")
	s.Gateways[0].Responses = map[string]sources.Reading{"2xx": rd(nan, ""), "5xx": rd(inf, "")}
	s.Gateways[0].Predicted = sources.HitRatio{Present: true, Ratio: inf, Total: 3, Unit: "requests"}
	s.Gateways[1].Name = ""
	for k, ser := range s.Charts {
		p := append([]float64(nil), ser.Points...)
		p[3], p[10], p[20] = nan, inf, -inf
		p[30] = 1e200
		ser.Points = p
		s.Charts[k] = ser
	}
	s.Charts["itl_p50"] = sources.Series{Name: "itl_p50"}
	s.Charts["itl_p99"] = sources.Series{Name: "itl_p99", Step: time.Second, Points: []float64{5, 5, 5, 5}}
	s.Targets[0].Health = sources.Pending
	s.Fleet.Rejected = rd(nan, "")
	s.Fleet.TargetsUp = -1
	s.Events = append(s.Events, sources.Event{Kind: "restart", Name: "\x1b]0;title\x07", Detail: strings.Repeat("x", 500)})
	return s
}

func invariantSnapshots() map[string]*sources.Snapshot {
	return map[string]*sources.Snapshot{
		"sample": sampleSnapshot(),
		"nil":    nil,
		"empty":  {},
		"weird":  weirdSnapshot(),
		"big":    bigSnapshot(30),
	}
}

// sizes is every size the invariant test tries: all widths 0..130 at a few
// heights and all heights 0..45 at a few widths.
func sizes() [][2]int {
	var out [][2]int
	for _, h := range []int{0, 1, 2, 5, 9, 24, 45} {
		for w := 0; w <= 130; w++ {
			out = append(out, [2]int{w, h})
		}
	}
	for _, w := range []int{0, 1, 3, 29, 30, 40, 79, 130} {
		for h := 0; h <= 45; h++ {
			out = append(out, [2]int{w, h})
		}
	}
	return out
}

func TestPanelsExactSizeEverywhere(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := themes.Default()
	sz := sizes()
	if testing.Short() {
		sz = sz[:len(sz)/4]
	}
	for name, snap := range invariantSnapshots() {
		for _, p := range All(st) {
			for i, s := range sz {
				p.SetFocused(i%2 == 0)
				p.SetSize(s[0], s[1])
				p.SetSnapshot(snap)
				v := p.View()
				checkBlock(t, name+"/"+p.Title()+"/"+itoa(s[0])+"x"+itoa(s[1]), v, s[0], s[1])
				if strings.Contains(v, "render error") {
					t.Fatalf("%s/%s at %v: %s", name, p.Title(), s, v)
				}
			}
		}
	}
}

func TestSummaryExactWidth(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for name, snap := range invariantSnapshots() {
		for _, th := range themes.Names() {
			tm, _ := themes.ByName(th)
			st := themes.NewStyles(tm)
			for w := 0; w <= 220; w++ {
				state := SummaryState{Paused: w%3 == 0, Interval: time.Second, Window: 5 * time.Minute,
					Now: sampleTime.Add(time.Duration(w%7) * time.Second), LastTick: sampleTime}
				v := Summary(snap, st, w, state)
				if w == 0 {
					if v != "" {
						t.Fatalf("%s: width 0 gave %q", name, v)
					}
					continue
				}
				checkBlock(t, name+"/summary/"+itoa(w), v, w, 1)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
