package panels

import (
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
		"! KV transfers queue behind each other: util capped at 100%", "over X: offered exceeds sustained by X"} {
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
