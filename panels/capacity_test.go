package panels

import (
	"math"
	"strings"
	"testing"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// TestCapacityViewSaysOverNotNegative: a KV path whose transfers overlap
// shows its util capped at 100 % with the number in flight and no
// headroom, never a share above 100 % or a negative headroom; a pool over
// capacity says "over" by how much; a path busy a quarter of the time
// keeps its share and headroom.
func TestCapacityViewSaysOverNotNegative(t *testing.T) {
	s := sampleSnapshot()
	r := func(v float64) sources.Reading { return sources.Reading{Present: true, Value: v} }
	s.Diagnosis.Capacity = sources.Capacity{TargetUtil: 0.8,
		Decode: sources.PoolLoad{Present: true, Role: sources.RoleDecode, Unit: "output tok/s", Offered: r(6800),
			Served: r(5100), PerWorker: r(2700), Capacity: r(5400), Utilisation: r(6800.0 / 5400), Headroom: r(-1400),
			Workers: 2, WorkersNeeded: 4},
		Transfer: sources.TransferLoad{Present: true, Rate: r(2.6e9), Links: []sources.LinkLoad{
			{Name: "prefill-0", Rate: r(2.0e9), Bandwidth: r(6.02e8), InFlight: r(3.28), Busy: r(1), Queued: true, Headroom: r(0)},
			{Name: "prefill-1", Rate: r(0.6e9), Bandwidth: r(2.4e9), InFlight: r(0.25), Busy: r(0.25), Headroom: r(1.8e9)},
		}}}
	v := CapacityView(s, themes.NewStyles(themes.Mono()), 160, 40)
	for _, want := range []string{"100%! ×3.3", "none", "over 1.4k", "25%", "1.8GB",
		"! KV transfers queue: util capped at 100%, ×N in flight", "over X: offered exceeds sustained by X"} {
		if !strings.Contains(v, want) {
			t.Errorf("missing %q:\n%s", want, v)
		}
	}
	for _, bad := range []string{"328%", "-1.4", "−1.4"} {
		if strings.Contains(v, bad) {
			t.Errorf("shows %q:\n%s", bad, v)
		}
	}
}

// TestGoodputNamesTheBucket: goodput whose ITL SLO falls between buckets
// far apart is given at those bucket bounds, where each figure is exact,
// and the short form names the bucket; narrow bounds keep the range.
func TestGoodputNamesTheBucket(t *testing.T) {
	g := sources.Goodput{Present: true, SLOTTFT: 2, SLOITL: 0.05,
		Share:      sources.Range{Present: true, Lo: 0.032, Est: 0.4, Hi: 0.76},
		TTFT:       sources.Range{Present: true, Lo: 0.95, Est: 0.95, Hi: 0.95},
		ITL:        sources.Range{Present: true, Lo: 0.082, Est: 0.42, Hi: 0.76},
		TTFTBucket: sources.SLOBucket{Present: true, Lo: 2, Hi: 2},
		ITLBucket:  sources.SLOBucket{Present: true, Lo: 0.04, Hi: 0.06},
		Rate:       sources.Range{Present: true, Lo: 0.56, Est: 7, Hi: 13}}
	if got, want := goodputShort(g), "goodput 3.2–76% (ITL SLO 50ms in bucket 40ms–60ms)"; got != want {
		t.Errorf("short %q, want %q", got, want)
	}
	if got, want := goodputShare(g), "≥3.2% of completions at ITL ≤ 40ms, ≤76% at ITL ≤ 60ms (SLO TTFT ≤ 2.00s, ITL ≤ 50ms; no bucket at ITL 50ms)"; got != want {
		t.Errorf("long %q, want %q", got, want)
	}
	s := sampleSnapshot()
	s.Diagnosis.Admission.Goodput = g
	if l := goodputLine(s); !strings.HasPrefix(l, "goodput ≥3.2% of completions at ITL ≤ 40ms") || !strings.Contains(l, "0.56–13 req/s") {
		t.Errorf("line %q", l)
	}
	// Beyond the top bucket: say there is no bucket above it.
	g.ITLBucket = sources.SLOBucket{Present: true, Lo: 0.04, Hi: math.Inf(1)}
	if got := goodputShare(g); !strings.Contains(got, "≤76% at any ITL (no bucket above 40ms)") {
		t.Errorf("beyond the top bucket: %q", got)
	}
	// Narrow bounds: one range.
	g.Share = sources.Range{Present: true, Lo: 0.92, Est: 0.93, Hi: 0.95}
	if got := goodputShort(g); got != "goodput 92–95%" {
		t.Errorf("narrow short %q", got)
	}
	if got := goodputShare(g); got != "92–95% of completions (TTFT ≤ 2.00s, ITL ≤ 50ms)" {
		t.Errorf("narrow long %q", got)
	}
}
