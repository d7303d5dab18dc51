package panels

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// wideGoodput is how far apart (ratio points) goodput's bounds may be and
// still read as one range; beyond it the text names the buckets instead.
const wideGoodput = 0.20

// sloSpan is one SLO whose threshold falls inside a histogram bucket that
// widens goodput: name ("TTFT", "ITL"), threshold and the bucket's bounds
// (seconds).
type sloSpan struct {
	name        string
	slo, lo, hi float64
}

// wideSLOs are the SLOs to blame when goodput's bounds are wide: those
// whose threshold lies strictly inside a bucket and whose own share's
// bounds differ by at least 5 points. None when the bounds are narrow, or
// when the width comes only from combining two histograms.
func wideSLOs(g sources.Goodput) []sloSpan {
	if !g.Share.Present || g.Share.Hi-g.Share.Lo < wideGoodput {
		return nil
	}
	var out []sloSpan
	for _, x := range []struct {
		name  string
		share sources.Range
		b     sources.SLOBucket
		slo   float64
	}{{"TTFT", g.TTFT, g.TTFTBucket, g.SLOTTFT}, {"ITL", g.ITL, g.ITLBucket, g.SLOITL}} {
		if x.share.Present && x.b.Present && x.b.Lo < x.b.Hi && x.share.Hi-x.share.Lo >= 0.05 {
			out = append(out, sloSpan{name: x.name, slo: x.slo, lo: x.b.Lo, hi: x.b.Hi})
		}
	}
	return out
}

// goodputShort is the one-item form for the token cadence line: "goodput
// 92–95%", or with wide bounds the bucket to blame: "goodput 3.2–76% (ITL
// SLO 50ms in bucket 40ms–60ms)".
func goodputShort(g sources.Goodput) string {
	out := "goodput " + rangePct(g.Share)
	var why []string
	for _, w := range wideSLOs(g) {
		why = append(why, w.name+" SLO "+secs(w.slo)+" in bucket "+boundText(w.lo)+"–"+boundText(w.hi))
	}
	if len(why) > 0 {
		out += " (" + strings.Join(why, ", ") + ")"
	}
	return out
}

// goodputShare is the share of completions meeting the SLO with the SLO
// named: "92–95% of completions (TTFT ≤ 2.00s, ITL ≤ 50ms)". When a
// threshold falls inside a bucket that makes the bounds wide, each bound
// is given at the bucket bound where it is exact, so no figure is
// interpolated: "≥3.2% of completions at ITL ≤ 40ms, ≤76% at ITL ≤ 60ms
// (SLO TTFT ≤ 2.00s, ITL ≤ 50ms; no bucket at ITL 50ms)".
func goodputShare(g sources.Goodput) string {
	slo := "TTFT ≤ " + secs(g.SLOTTFT) + ", ITL ≤ " + secs(g.SLOITL)
	wide := wideSLOs(g)
	if len(wide) == 0 {
		return rangePct(g.Share) + " of completions (" + slo + ")"
	}
	var lo, hi, names []string
	for _, w := range wide {
		names = append(names, w.name+" "+secs(w.slo))
		if w.lo > 0 {
			lo = append(lo, w.name+" ≤ "+secs(w.lo))
		} else {
			lo = append(lo, w.name+" below the first bucket")
		}
		if !math.IsInf(w.hi, 1) {
			hi = append(hi, w.name+" ≤ "+secs(w.hi))
		} else {
			hi = append(hi, "any "+w.name+" (no bucket above "+secs(w.lo)+")")
		}
	}
	return "≥" + pct(g.Share.Lo) + " of completions at " + strings.Join(lo, ", ") + ", ≤" + pct(g.Share.Hi) +
		" at " + strings.Join(hi, ", ") + " (SLO " + slo + "; no bucket at " + strings.Join(names, " or ") + ")"
}

// boundText is a bucket bound in seconds: "40ms", "∞".
func boundText(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return secs(v)
}
