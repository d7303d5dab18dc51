package expo

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"

	"github.com/charmbracelet/x/ansi"
)

// value returns the sample value of a counter, gauge or untyped series.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// labelsOf renders a series' labels as a=b,c=d (sorted as stored).
func labelsOf(m *dto.Metric) string {
	var b strings.Builder
	for i, lp := range m.Label {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lp.GetName() + "=" + lp.GetValue())
	}
	return b.String()
}

// seriesValues maps "labels" → value for a family of scalars.
func seriesValues(t *testing.T, r Result, fam string) map[string]float64 {
	t.Helper()
	mf := r.Families[fam]
	if mf == nil {
		t.Fatalf("family %q missing; have %v", fam, familyNames(r))
	}
	out := map[string]float64{}
	for _, m := range mf.Metric {
		out[labelsOf(m)] = value(m)
	}
	return out
}

func familyNames(r Result) []string {
	var names []string
	for n := range r.Families {
		names = append(names, n)
	}
	return names
}

func wantValues(t *testing.T, r Result, fam string, want map[string]float64) {
	t.Helper()
	got := seriesValues(t, r, fam)
	if len(got) != len(want) {
		t.Fatalf("%s: got series %v, want %v", fam, got, want)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !(g == w || (math.IsNaN(g) && math.IsNaN(w))) {
			t.Fatalf("%s{%s}: got %v (present %v), want %v; all: %v", fam, k, g, ok, w, got)
		}
	}
}

func hasWarning(r Result, sub string) bool {
	for _, w := range r.Stats.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func wantWarning(t *testing.T, r Result, sub string) {
	t.Helper()
	if !hasWarning(r, sub) {
		t.Fatalf("no warning containing %q; warnings: %q", sub, r.Stats.Warnings)
	}
}

func problemLines(r Result) []int {
	var lines []int
	for _, p := range r.Stats.Problems {
		lines = append(lines, p.Line)
	}
	return lines
}

func wantProblemLines(t *testing.T, r Result, lines ...int) {
	t.Helper()
	got := problemLines(r)
	if len(got) != len(lines) || r.Stats.ProblemCount != len(lines) {
		t.Fatalf("problems on lines %v (count %d), want %v; problems: %+v", got, r.Stats.ProblemCount, lines, r.Stats.Problems)
	}
	for i := range lines {
		if got[i] != lines[i] {
			t.Fatalf("problems on lines %v, want %v; problems: %+v", got, lines, r.Stats.Problems)
		}
	}
}

// checkSafe asserts the invariants every Result must satisfy whatever the
// input: printable names, sanitised labels/HELP/problems/warnings, and
// consistent counts.
func checkSafe(t testing.TB, r Result, opt Options) {
	t.Helper()
	safe := func(what, s string) {
		t.Helper()
		if !utf8.ValidString(s) {
			t.Fatalf("%s %q is not valid UTF-8", what, s)
		}
		for _, c := range s {
			if c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x200b && c <= 0x200f) ||
				(c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff {
				t.Fatalf("%s %q contains %U", what, s, c)
			}
		}
	}
	series := 0
	for name, mf := range r.Families {
		safe("family name", name)
		if mf.GetName() != name {
			t.Fatalf("family key %q holds %q", name, mf.GetName())
		}
		safe("HELP", mf.GetHelp())
		if len(mf.Metric) == 0 {
			t.Fatalf("family %q has no series", name)
		}
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				safe("label name", lp.GetName())
				safe("label value", lp.GetValue())
			}
		}
		series += len(mf.Metric)
	}
	for _, d := range r.Declared {
		safe("declared name", d)
	}
	if series != r.Stats.Series || len(r.Families) != r.Stats.Families {
		t.Fatalf("stats say %d families / %d series, result has %d / %d",
			r.Stats.Families, r.Stats.Series, len(r.Families), series)
	}
	maxSeries := opt.MaxSeries
	if maxSeries <= 0 {
		maxSeries = DefaultMaxSeries
	}
	if series > maxSeries {
		t.Fatalf("%d series over the cap %d", series, maxSeries)
	}
	maxProblems := opt.MaxProblems
	if maxProblems <= 0 {
		maxProblems = DefaultMaxProblems
	}
	if len(r.Stats.Problems) > maxProblems || len(r.Stats.Problems) > r.Stats.ProblemCount {
		t.Fatalf("%d problems kept, count %d, max %d", len(r.Stats.Problems), r.Stats.ProblemCount, maxProblems)
	}
	for i, p := range r.Stats.Problems {
		safe("problem message", p.Message)
		safe("problem excerpt", p.Excerpt)
		if w := ansi.StringWidth(p.Excerpt); w > maxExcerptCells {
			t.Fatalf("excerpt %q is %d cells wide", p.Excerpt, w)
		}
		if p.Line < 1 || (i > 0 && p.Line < r.Stats.Problems[i-1].Line) {
			t.Fatalf("problem lines not ascending from 1: %+v", r.Stats.Problems)
		}
	}
	for _, w := range r.Stats.Warnings {
		safe("warning", w)
	}
}
