package promql

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// Restart events come from growing indicators: a new scheduler pid is a
// restart at once; the counter resets that follow it (the fresh process's
// counters coming back) are that same restart; a reset alone is a restart.
func TestRestartEventsFromIndicators(t *testing.T) {
	b := &Backend{plan: newPlan(nil, "instance", "engine_type"), restart: map[string][]time.Time{}}
	t0 := time.Unix(1_800_000_000, 0)
	step := 5 * time.Second
	series := func(inst, kind string, vals ...float64) *model.SampleStream {
		s := &model.SampleStream{Metric: model.Metric{"instance": model.LabelValue(inst), "pdtop_kind": model.LabelValue(kind)}}
		for i, v := range vals {
			if v != 0 {
				s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(i) * step).UnixNano()), Value: model.SampleValue(v)})
			}
		}
		return s
	}
	spec := chartSpec{step: step, span: step, ends: []time.Time{t0.Add(7 * step)}}
	m := model.Matrix{
		// a: new pid at step 1, its counters come back at step 4 (same restart).
		series("a", "start", 0, 1, 1, 0, 0, 0, 0, 0),
		series("a", "reset", 0, 0, 0, 0, 1, 1, 1, 1),
		// b: a counter reset alone at step 2, another at step 6.
		series("b", "reset", 0, 0, 1, 1, 1, 1, 2, 2),
		// c: pid and counters together at step 3: one restart.
		series("c", "start", 0, 0, 0, 1, 0, 0, 0, 0),
		series("c", "reset", 0, 0, 0, 1, 1, 1, 0, 0),
	}
	c := &chartCache{restarts: map[string]*restartScan{}}
	got := map[string][]int{}
	for _, e := range b.restartEvents(c, m, t0, spec) {
		got[e.Name] = append(got[e.Name], int(e.Time.Sub(t0)/step))
	}
	want := map[string][]int{"a": {1}, "b": {2, 6}, "c": {3}}
	for inst, w := range want {
		if len(got[inst]) != len(w) {
			t.Errorf("%s: restarts at steps %v, want %v", inst, got[inst], w)
			continue
		}
		for i := range w {
			if got[inst][i] != w[i] {
				t.Errorf("%s: restarts at steps %v, want %v", inst, got[inst], w)
			}
		}
	}
	// A later scan starting at the last step scanned adds nothing new.
	if again := b.restartEvents(c, m, t0.Add(7*step), spec); len(again) != 0 {
		t.Errorf("re-scan of the last step: %+v", again)
	}
}
