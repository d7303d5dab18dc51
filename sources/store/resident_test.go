package store

import (
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// TestKVResident: residency is (used + evictable) ÷ capacity from the
// latest gauges — a prefill pool full of cached prefixes reads 0% usage
// and 99% resident — and a pool's is the max over its workers.
func TestKVResident(t *testing.T) {
	const w2 = "http://10.0.0.2:30001/metrics"
	s := newStore(worker(w1, sources.RolePrefill), worker(w2, sources.RolePrefill))
	s.Ingest(ok(w1, 0, obs(pt(sources.SigKVUsage, 0), pt(sources.SigKVUsedTokens, 0),
		pt(sources.SigKVEvictableTokens, 396000), pt(sources.SigKVCapacity, 400000))))
	s.Ingest(ok(w2, 0, obs(pt(sources.SigKVUsage, 0.5)))) // no token split: no residency
	snap := s.Snapshot(at(0), time.Minute)
	r := snap.Workers[0].Readings.Get(sources.SigKVResident)
	if !r.Present || r.Value != 0.99 || r.Source == "" {
		t.Fatalf("resident = %+v, want 0.99 with its formula", r)
	}
	if _, ok := snap.Workers[1].Readings[sources.SigKVResident]; ok {
		t.Fatalf("residency without the token gauges: %+v", snap.Workers[1].Readings)
	}
	if p := snap.Prefill.Readings.Get(sources.SigKVResident); p.Value != 0.99 {
		t.Fatalf("pool resident = %+v", p)
	}
}
