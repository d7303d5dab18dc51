package panels

import (
	"math"
	"strconv"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Marks for values that cannot be shown as numbers. An absent reading is
// never drawn as 0.
const (
	markAbsent  = "—"   // not exposed by this target/version
	markPending = "n/a" // exposed, but fewer than two samples so far
	markRestart = "↻"   // restarted inside the window
	markApprox  = "~"   // a mean or last value, not a quantile
	markOver    = "!"   // at or over its threshold
	markCursor  = "▸"   // the selected row
)

// num formats a non-negative figure compactly: "0", "0.05", "2.5", "42",
// "1.2k", "35k", "1.2M".
func num(v float64) string {
	if !sources.Finite(v) {
		return markAbsent
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var s string
	switch {
	case v == 0:
		s = "0"
	case v < 0.01:
		s = "<0.01"
	case v < 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case v < 10 && v != math.Trunc(v):
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case v < 999.5:
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	default:
		s = si(v)
	}
	if neg {
		s = "-" + s
	}
	return s
}

// si formats v ≥ 1000 with a k/M/G/T suffix and two or three digits.
func si(v float64) string {
	units := []string{"k", "M", "G", "T", "P"}
	u := -1
	for v >= 999.5 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if u < 0 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	if v < 9.95 {
		return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + units[u]
}

// pct formats a ratio 0–1 as a percentage: "41%", "4.5%", "0%".
func pct(r float64) string {
	if !sources.Finite(r) {
		return markAbsent
	}
	p := r * 100
	switch {
	case p == 0:
		return "0%"
	case math.Abs(p) < 0.1:
		return "<0.1%"
	case math.Abs(p) < 9.95:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

// pp formats a difference of two ratios in percentage points: "+24pp".
func pp(d float64) string {
	if !sources.Finite(d) {
		return markAbsent
	}
	v := math.Round(d * 100)
	if v == 0 {
		return "0pp"
	}
	s := strconv.FormatFloat(v, 'f', 0, 64) + "pp"
	if v > 0 {
		s = "+" + s
	}
	return s
}

// secs formats a duration in seconds: "420µs", "8.5ms", "85ms", "1.40s",
// "12.5s", "2m05s".
func secs(v float64) string {
	if !sources.Finite(v) || v < 0 {
		return markAbsent
	}
	switch {
	case v == 0:
		return "0s"
	case v < 1e-3:
		return strconv.FormatFloat(v*1e6, 'f', 0, 64) + "µs"
	case v < 9.95e-3:
		return strconv.FormatFloat(v*1e3, 'f', 1, 64) + "ms"
	case v < 0.9995:
		return strconv.FormatFloat(v*1e3, 'f', 0, 64) + "ms"
	case v < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64) + "s"
	case v < 59.95:
		return strconv.FormatFloat(v, 'f', 1, 64) + "s"
	case v >= 1e7: // beyond what a Duration should hold on screen
		return num(v) + "s"
	}
	return age(time.Duration(v * float64(time.Second)))
}

// inUnit formats a latency v given in unit ("s" or "ms").
func inUnit(v float64, unit string) string {
	if unit == "ms" {
		return secs(v / 1000)
	}
	return secs(v)
}

// age formats an elapsed time compactly: "12s", "3m05s", "2h10m", "4d".
func age(d time.Duration) string { return sources.FormatAge(d) }

// since formats an age shown on a live screen, coarse enough that it does
// not rewrite its line every second: exact below 10s, then 5s steps to a
// minute, then whole minutes, then age's hours and days. Over SSH a
// ticking age on every stale row would cost a line per panel per second.
func since(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return age(d)
	case d < time.Minute:
		return age(d.Truncate(5 * time.Second))
	case d < time.Hour:
		return age(d.Truncate(time.Minute))
	}
	return age(d)
}

// span formats a window length for axis labels and the summary: "5m",
// "90s", "1h".
func span(d time.Duration) string {
	if d <= 0 {
		return "?"
	}
	if d < time.Minute || d%time.Minute != 0 && d < 10*time.Minute {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	if d < time.Hour || d%time.Hour != 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
}
