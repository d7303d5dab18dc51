package diagnose

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// verdictText is the reading of v in words.
func verdictText(v *sources.HitVerdict, th sources.Thresholds) string {
	first := func() string {
		if len(v.Causes) == 0 {
			return ""
		}
		parts := []string{v.Causes[0].Evidence}
		if len(v.Causes) > 1 {
			parts = append(parts, v.Causes[1].Evidence)
		}
		return strings.Join(parts, "; ")
	}
	scale := ""
	if !v.SameScale {
		scale = " (different scale)"
	}
	hit := "hit " + Pct(v.Actual.Ratio)
	if !v.Actual.Since.IsZero() {
		hit += " since the restart"
	}
	expected := Pct(v.Expected.Ratio) + " predicted"
	switch {
	case strings.HasPrefix(v.Basis, "its pool peers"):
		expected = Pct(v.Expected.Ratio) + " on its peers"
	case v.Basis == ownBasis:
		expected = Pct(v.Expected.Ratio) + " earlier"
	}
	figures := hit + " vs " + expected + ", gap " + Pts(v.Gap) + scale
	switch {
	case !v.GapKnown && len(v.Causes) > 0 && (v.Causes[0].Kind == sources.CauseLowTraffic || v.Causes[0].Kind == sources.CauseNoCacheData):
		if v.Causes[0].Kind == sources.CauseLowTraffic {
			return "too little traffic to judge: " + v.Causes[0].Evidence
		}
		return "no cache data: " + v.Causes[0].Evidence
	case !v.GapKnown:
		// Say why there is no comparison, then any evidence seen.
		why := "nothing to compare it with"
		switch {
		case strings.HasPrefix(v.Basis, noBaseline):
			why += ": " + strings.TrimPrefix(v.Basis, noBaseline)
		case v.Expected.Present && v.Expected.Total <= 0:
			why = "no predicted lookups in the window to compare with"
		}
		if c := first(); c != "" {
			return why + "; " + c
		}
		return why
	case v.Large:
		return figures + ": " + first()
	}
	// Under the threshold: the figures, then any evidence worth seeing
	// before it moves them. A gap that rounds to 0 points is level, never
	// "above by 0 pts".
	var out string
	switch pts := math.Round(v.Gap * 100); {
	case pts == 0:
		out = hit + ", level with the " + expected + scale
	case pts < 0:
		out = hit + ", above the " + expected + " by " + Pts(-v.Gap) + scale
	default:
		out = figures + ", under the " + Pts(th.HitGap) + " threshold"
	}
	if c := first(); c != "" {
		out += "; " + c
	}
	return out
}
