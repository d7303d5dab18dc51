package expo

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// panelFamilies is a realistic Keep set: the worker families the
// dashboard's panels read (DESIGN.md, "Canonical signals"), by their
// base names; panelKeep accepts both the sglang: and sglang_ spellings.
var panelFamilies = []string{
	// queues and load
	"num_running_reqs", "num_queue_reqs",
	"num_prefill_bootstrap_queue_reqs", "num_prefill_inflight_queue_reqs",
	"num_decode_prealloc_queue_reqs", "num_decode_transfer_queue_reqs",
	"num_retracted_reqs", "max_running_requests",
	// KV pool
	"token_usage", "max_total_num_tokens", "kv_used_tokens", "kv_evictable_tokens",
	"pending_prealloc_token_usage", "gen_throughput", "cache_hit_rate", "engine_startup_time",
	// token and request counters
	"prompt_tokens_total", "generation_tokens_total", "cached_tokens_total",
	"num_requests_total", "num_aborted_requests_total", "num_retracted_requests_total",
	"num_transfer_failed_reqs_total", "num_bootstrap_failed_reqs_total", "num_prefill_retries_total",
	"realtime_tokens_total", "prefill_effective_tokens_total", "evicted_tokens_total",
	// latency histograms
	"time_to_first_token_seconds", "inter_token_latency_seconds", "time_per_output_token_seconds",
	"queue_time_seconds", "e2e_request_latency_seconds",
	// KV transfer
	"kv_transfer_latency_ms", "kv_transfer_speed_gb_s", "kv_transfer_total_mb",
}

func panelKeep() func(string) bool {
	set := make(map[string]struct{}, 2*len(panelFamilies))
	for _, f := range panelFamilies {
		set["sglang:"+f] = struct{}{}
		set["sglang_"+f] = struct{}{}
	}
	return func(name string) bool {
		_, ok := set[name]
		return ok
	}
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkParseWorkerLarge measures one SGLang worker body (142 KB, 887
// lines). keep-all parses everything, keep-panels only what the panels
// read, and expfmt is the bare library call on the whole body for
// comparison (PERFORMANCE.md: ≈6.8 ms and 44,800 allocs on the author's
// machine).
func BenchmarkParseWorkerLarge(b *testing.B) {
	body := readFixture(b, "sglang-worker-large.prom")
	run := func(name string, opt Options) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r := Parse(body, opt)
				if r.Stats.Families == 0 || r.Stats.ProblemCount != 0 {
					b.Fatalf("unexpected result: %+v", r.Stats)
				}
			}
		})
	}
	run("keep-all", Options{})
	run("keep-panels", Options{Keep: panelKeep()})
	b.Run("expfmt", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			p := expfmt.NewTextParser(model.UTF8Validation)
			if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParseBadLines measures the recovery path: the worker body with
// one bad line in each of ten families.
func BenchmarkParseBadLines(b *testing.B) {
	lines := strings.Split(string(readFixture(b, "sglang-worker-large.prom")), "\n")
	for i := 50; i < len(lines); i += len(lines) / 10 {
		if !strings.HasPrefix(lines[i], "#") {
			lines[i] = strings.Replace(lines[i], "}", `,oops}`, 1)
		}
	}
	body := []byte(strings.Join(lines, "\n"))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := Parse(body, Options{})
		if r.Stats.ProblemCount == 0 {
			b.Fatal("no problems found")
		}
	}
}
