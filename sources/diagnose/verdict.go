package diagnose

import (
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
	if strings.Contains(v.Actual.Source, "since the restart") {
		hit += " since the restart"
	}
	expected := Pct(v.Expected.Ratio) + " predicted"
	if strings.HasPrefix(v.Basis, "its pool peers") {
		expected = Pct(v.Expected.Ratio) + " on its peers"
	}
	figures := hit + " vs " + expected + ", gap " + Pts(v.Gap) + scale
	switch {
	case !v.GapKnown && len(v.Causes) > 0 && (v.Causes[0].Kind == sources.CauseLowTraffic || v.Causes[0].Kind == sources.CauseNoCacheData):
		if v.Causes[0].Kind == sources.CauseLowTraffic {
			return "too little traffic to judge: " + v.Causes[0].Evidence
		}
		return "no cache data: " + v.Causes[0].Evidence
	case !v.GapKnown:
		if c := first(); c != "" {
			return "nothing to compare; " + c
		}
		return "nothing to compare"
	case v.Large:
		return figures + ": " + first()
	}
	c := first()
	switch {
	case c != "" && v.Gap >= 0:
		return figures + " (under the " + Pts(th.HitGap) + " threshold); " + c
	case c != "":
		return hit + ", above the " + expected + scale + "; " + c
	case v.Gap < 0:
		return "actual above expected by " + Pts(-v.Gap) + scale
	}
	return "gap " + Pts(v.Gap) + scale + ", under the " + Pts(th.HitGap) + " threshold"
}
