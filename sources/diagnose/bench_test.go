package diagnose_test

import (
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources/diagnose"
	"github.com/pdtop/pdtop/sources/sim"
)

// BenchmarkRun is the diagnoses of one snapshot of a 16-worker fleet
// with two replicas after two minutes (histories full of points), the
// work added to every snapshot.
func BenchmarkRun(b *testing.B) {
	r := newFleetRun(b, sim.Config{Seed: 1, Prefill: 8, Decode: 8, Replicas: 2, Scenario: sim.ScenarioPrefillRestart})
	r.advance(120)
	s := r.store.Snapshot(r.now, time.Minute)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		diagnose.Run(s)
	}
}

// BenchmarkSnapshotWithDiagnoses is the whole snapshot derivation for the
// same fleet (store and diagnoses), for comparison.
func BenchmarkSnapshotWithDiagnoses(b *testing.B) {
	r := newFleetRun(b, sim.Config{Seed: 1, Prefill: 8, Decode: 8, Replicas: 2, Scenario: sim.ScenarioPrefillRestart})
	r.advance(120)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.store.Snapshot(r.now, time.Minute)
	}
}
