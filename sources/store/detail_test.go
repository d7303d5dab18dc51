package store

import (
	"math"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

func finitePoints(p []float64) int {
	n := 0
	for _, v := range p {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

// TestDetailHasEverySignalsHistoryAndRestarts checks the drill-down data:
// a history for every scalar signal the worker exposes (not only the few
// the Snapshot carries), quantile histories of its histograms, the
// restart list with reasons, and steps that line up with the Snapshot's.
func TestDetailHasEverySignalsHistoryAndRestarts(t *testing.T) {
	s := newStore(worker(w1, sources.RoleDecode))
	for i := 0; i < 60; i++ {
		prompt := float64(1000 + 100*i)
		if i >= 40 {
			prompt = float64(100 * (i - 40)) // restarted at 40 s
		}
		o := obs(pt(sources.SigRunning, float64(i%7)), pt(sources.SigPromptTokens, prompt),
			pt(sources.SigAborted, float64(i)))
		o.Sources[sources.SigRunning] = "sglang:num_running_reqs"
		o.Hists = []sources.Hist{hist(sources.SigITL, []float64{float64(10 * i), float64(20 * i), float64(20 * i), float64(20 * i), float64(20 * i)}, float64(i))}
		s.Ingest(ok(w1, float64(i), o))
	}
	now := at(59)
	d := s.Detail(now, w1, time.Minute)
	if d == nil {
		t.Fatal("no detail for a known target")
	}
	snap := s.Snapshot(now, time.Minute)
	if d.Step != snap.Charts["output_tps"].Step || d.Span != snap.ChartSpan {
		t.Fatalf("steps %v/%v do not line up with the snapshot's %v/%v", d.Step, d.Span, snap.Charts["output_tps"].Step, snap.ChartSpan)
	}
	for _, sig := range []sources.Signal{sources.SigRunning, sources.SigPromptTokens, sources.SigAborted} {
		if finitePoints(d.History[sig]) < 10 {
			t.Errorf("%s: history %v", sig, d.History[sig])
		}
	}
	if _, in := snap.Workers[0].History[sources.SigAborted]; in {
		t.Fatal("test premise: the snapshot should not carry aborted's history")
	}
	if finitePoints(d.P99[sources.SigITL]) < 10 || finitePoints(d.P50[sources.SigITL]) < 10 {
		t.Errorf("ITL quantile history: p50 %v p99 %v", d.P50[sources.SigITL], d.P99[sources.SigITL])
	}
	if len(d.Restarts) != 1 || !d.Restarts[0].Time.Equal(at(40)) || d.Restarts[0].Reason == "" {
		t.Fatalf("restarts = %+v, want one at 40 s with a reason", d.Restarts)
	}
	if d.Sources[sources.SigRunning] != "sglang:num_running_reqs" {
		t.Fatalf("sources = %v", d.Sources)
	}
	if s.Detail(now, "http://nope/metrics", time.Minute) != nil {
		t.Fatal("detail for an unknown target")
	}
}
