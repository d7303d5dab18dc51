package schema

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// BenchmarkMapWorker maps a realistic current worker body (the shared
// 142 KB fixture: 75 families, 737 samples, PD and per-stage histograms;
// values random). Parsing happens once, outside the loop: this measures the
// schema step alone. "all-families" hands Map everything the body has;
// "prefiltered" keeps only the families Wanted reports, as the parser's
// pre-filter will.
func BenchmarkMapWorker(b *testing.B) {
	fams, declared := load(b, "sglang-worker-large.prom")
	kept := make(map[string]*dto.MetricFamily)
	for name, mf := range fams {
		if Wanted(name) {
			kept[name] = mf
		}
	}
	for _, bc := range []struct {
		name string
		fams map[string]*dto.MetricFamily
	}{{"all-families", fams}, {"prefiltered", kept}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if obs := Map(bc.fams, declared); obs.Generation != GenSGLangWorker {
					b.Fatal(obs.Generation)
				}
			}
		})
	}
}

// BenchmarkMapGateway maps the full SMG fixture.
func BenchmarkMapGateway(b *testing.B) {
	fams, declared := load(b, "smg_full.prom")
	b.ReportAllocs()
	for b.Loop() {
		Map(fams, declared)
	}
}

// BenchmarkWanted is the pre-filter's per-family cost.
func BenchmarkWanted(b *testing.B) {
	names := []string{"sglang:num_running_reqs", "sglang:per_stage_req_latency_seconds", "smg_worker_health", "go_gc_duration_seconds"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Wanted(names[i%len(names)])
	}
}
