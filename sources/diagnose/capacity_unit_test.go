package diagnose_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
)

// withLink gives synthetic worker i a window of KV transfers: count
// transfers of sizeMB each taking ms each, over the 60 s the worker's
// prompt-token reading covers.
func withLink(s *sources.Snapshot, i int, count, sizeMB, ms float64) {
	w := &s.Workers[i]
	w.Dists = map[sources.Signal]sources.Quantiles{
		sources.SigKVXferSize: {Present: true, Form: "histogram", Unit: "MB", Mean: sizeMB, Count: count,
			Source: "sglang:kv_transfer_size_mb"},
		sources.SigKVXferLatency: {Present: true, Form: "histogram", Unit: "ms", Mean: ms, Count: count,
			Source: "sglang:kv_transfer_latency_ms"},
	}
}

// TestLinkInFlight: transfers that overlap are counted as transfers in
// flight (Little's law), never as a share of time above 100 %, and the
// path's headroom is none rather than negative. A path busy a quarter of
// the time keeps its share and its headroom.
func TestLinkInFlight(t *testing.T) {
	s := synthetic(0.7, 0.7)
	// p0: 600 transfers of 100 MB in 60 s = 1 GB/s; each took 200 ms
	// (500 MB/s): 2 in flight on average.
	withLink(s, 0, 600, 100, 200)
	// p1: 150 transfers of 100 MB = 250 MB/s at 1 GB/s each: busy 25 %.
	withLink(s, 1, 150, 100, 100)
	diagnose.Run(s)
	tr := s.Diagnosis.Capacity.Transfer
	if len(tr.Links) != 2 {
		t.Fatalf("links: %+v", tr.Links)
	}
	p0, p1 := tr.Links[0], tr.Links[1]
	if !p0.Queued || math.Abs(p0.InFlight.Value-2) > 1e-9 || p0.Busy.Value != 1 || !p0.Headroom.Present || p0.Headroom.Value != 0 {
		t.Errorf("p0 (2 in flight): %+v", p0)
	}
	if p1.Queued || math.Abs(p1.Busy.Value-0.25) > 1e-9 || math.Abs(p1.InFlight.Value-0.25) > 1e-9 ||
		math.Abs(p1.Headroom.Value-0.75e9) > 1 {
		t.Errorf("p1 (busy 25%%): %+v", p1)
	}
	if tr.Busiest.Source != "p0" || tr.Busiest.Value != 1 {
		t.Errorf("busiest: %+v", tr.Busiest)
	}
	var found bool
	for _, f := range s.Diagnosis.Findings {
		if f.Kind != "capacity" {
			continue
		}
		if f.Name == "p1" || strings.Contains(f.Text, "of the time") {
			t.Errorf("finding: %q", f.Text)
		}
		if f.Name == "p0" {
			found = true
			if want := "p0: KV transfers overlap — 2.0 in flight on average (they queue behind each other); 1.0 GB/s sent at 500 MB/s per transfer"; f.Text != want {
				t.Errorf("finding %q, want %q", f.Text, want)
			}
		}
	}
	if !found {
		t.Errorf("no finding for p0: %+v", s.Diagnosis.Findings)
	}
}

// burstSnapshot is a synthetic fleet whose input tokens/s doubles 25 s
// before the end (5 s steps over 5 min), with TTFT p99 going from 1 s to
// 10 s and the hit ratio from hitBefore to hitAfter at the burst.
func burstSnapshot(hitBefore, hitAfter float64) *sources.Snapshot {
	s := synthetic(0.7, 0.7)
	const n, onset = 60, 54
	series := func(before, after float64) sources.Series {
		p := make([]float64, n)
		for j := range p {
			p[j] = before
			if j >= onset {
				p[j] = after
			}
		}
		return sources.Series{Step: 5 * time.Second, Points: p}
	}
	s.Charts = map[string]sources.Series{
		"input_tps":  series(1000, 2000),
		"ttft_p99":   series(1, 10),
		"hit_actual": series(hitBefore, hitAfter),
	}
	return s
}

// TestBurstIsColdOnlyWhenTheHitFalls: a burst whose hit ratio held is not
// a cold start, and a KV path whose transfers queue is named as the cause
// of its TTFT rise; a burst whose hit fell is a cold start, with the
// queueing path named as well.
func TestBurstIsColdOnlyWhenTheHitFalls(t *testing.T) {
	for _, c := range []struct {
		before, after float64
		cold          bool
		text          string
	}{
		{0.81, 0.82, false, "burst 25s ago (input ×2.0): TTFT p99 10s in its first minute vs 1.0s before — not a cold cache: " +
			"p0's KV transfers queue behind each other (2.0 in flight on average)"},
		{0.80, 0.40, true, "burst 25s ago (input ×2.0): TTFT p99 10s in its first minute vs 1.0s before — cold cache, and also " +
			"p0's KV transfers queue behind each other (2.0 in flight on average)"},
	} {
		s := burstSnapshot(c.before, c.after)
		withLink(s, 0, 600, 100, 200) // 2 in flight on average
		diagnose.Run(s)
		cs := s.Diagnosis.Capacity.ColdStarts
		if len(cs) != 2 || cs[0].Metric != "TTFT p99" || cs[1].Metric != "hit" {
			t.Fatalf("hit %v→%v: %+v", c.before, c.after, cs)
		}
		if cs[0].Cold != c.cold || cs[1].Cold != c.cold || cs[0].Text != c.text || !strings.HasPrefix(cs[0].Explained, "p0's KV") {
			t.Errorf("hit %v→%v: %+v\nwant text %q", c.before, c.after, cs[0], c.text)
		}
		if !c.cold && !strings.HasSuffix(cs[1].Text, "no drop, not a cold cache") {
			t.Errorf("hit held: %q", cs[1].Text)
		}
	}
	// Nothing else in the window: no explanation is invented.
	s := burstSnapshot(0.81, 0.82)
	diagnose.Run(s)
	if cs := s.Diagnosis.Capacity.ColdStarts; len(cs) != 2 || cs[0].Cold || cs[0].Explained != "" || strings.Contains(cs[0].Text, "—") {
		t.Errorf("no other cause: %+v", cs)
	}
}
