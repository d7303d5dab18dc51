package diagnose_test

import (
	"math"
	"strings"
	"testing"

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
