package sim

import (
	"testing"
	"time"
)

// BenchmarkStep measures what the simulation costs beside the TUI: one op
// is one simulated second of a warm fleet in steady state (no HTTP).
// cpu-ms/sim-s is process CPU time (all threads, GC included) per
// simulated second; req/sim-s is the load being simulated.
func BenchmarkStep(b *testing.B) {
	for _, sz := range []struct{ n, replicas int }{{8, 2}, {64, 4}} {
		b.Run(itoa(sz.n)+"+"+itoa(sz.n), func(b *testing.B) {
			f, err := New(Config{Seed: 1, Prefill: sz.n, Decode: sz.n, Replicas: sz.replicas, Scenario: ScenarioSteady})
			if err != nil {
				b.Fatal(err)
			}
			f.Step(2 * time.Minute) // warm caches and trees
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				f.Step(time.Second)
			}
			cpu := cpuTime() - cpu0
			b.StopTimer()
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/sim-s")
			}
			b.ReportMetric(f.Rate(), "req/sim-s")
		})
	}
}
