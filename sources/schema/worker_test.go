package schema

import (
	"reflect"
	"testing"

	"github.com/pdtop/pdtop/sources"
)

// Bucket bounds used by the fixtures.
var (
	kvLatencyBounds = []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, inf}
	kvSpeedBounds   = []float64{0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400, inf}
	kvSizeBounds    = []float64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000, inf}
	ttftBounds      = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, inf}
	e2eBounds       = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400, inf}
	itlBounds       = []float64{0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, inf}
)

func rep(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// workerCase is one SGLang worker fixture with everything Map must say
// about it: exact points, exact hists, the names used, role, pids, markers.
type workerCase struct {
	file    string
	role    sources.Role
	points  map[pk]float64
	hists   map[sources.Signal]wantHist
	sources map[sources.Signal]string
	pids    []string
	markers map[string]float64
}

func TestMapWorkerFixtures(t *testing.T) {
	cases := []workerCase{
		{
			// F1: late-2024/early-2025; TPOT stands in for ITL; no running gauge.
			file: "f1_early2025.prom",
			points: map[pk]float64{
				{sources.SigPromptTokens, ""}:      8.128902e+06,
				{sources.SigGenerationTokens, ""}:  7.557572e+06,
				{sources.SigKVUsage, ""}:           0.28,
				{sources.SigCacheHitLastBatch, ""}: 0.007507552643049313,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigITL: {
					bounds: []float64{0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, inf},
					counts: []float64{1, 73, 382, 593, 855, 1035, 1815, 11685, 433413, 4.950195e+06, 7.039435e+06, 7.171662e+06,
						7.266055e+06, 7.296752e+06, 7.312226e+06, 7.339675e+06, 7.357747e+06, 7.389414e+06, 7.400757e+06},
					sum: 866964.5791549598, count: 7.400757e+06,
				},
			},
			sources: map[sources.Signal]string{sources.SigITL: "sglang:time_per_output_token_seconds"},
		},
		{
			// F2: 8 DP ranks, pid gauges (never summed), the old prealloc name
			// for today's bootstrap queue on a "unified" worker.
			file: "f2_dp_attention.prom",
			points: map[pk]float64{
				{sources.SigRetractedGauge, ""}: 0,
				{sources.SigBootstrapQueue, ""}: 0,
			},
			sources: map[sources.Signal]string{
				sources.SigRetractedGauge: "sglang:num_retracted_reqs",
				sources.SigBootstrapQueue: "sglang:num_prefill_prealloc_queue_reqs",
			},
			pids: []string{"910", "912", "914", "915"},
		},
		{
			// F3: tokenizer metrics (model_name only) beside scheduler metrics.
			file: "f3_mid2025_pd.prom",
			points: map[pk]float64{
				{sources.SigRequests, ""}:     217,
				{sources.SigCachedTokens, ""}: 2688,
				{sources.SigAborted, ""}:      157,
				{sources.SigRunning, ""}:      0,
				{sources.SigKVUsage, ""}:      0,
			},
		},
		{
			file:   "f3_decode.prom",
			points: map[pk]float64{{sources.SigTransferFailed, ""}: 156},
		},
		{
			// F4 gauge form: the gauge signal, never the histogram one.
			file:    "f4_kv_gauge.prom",
			points:  map[pk]float64{{sources.SigKVXferLatencyGauge, ""}: 12.5},
			sources: map[sources.Signal]string{sources.SigKVXferLatencyGauge: "sglang:kv_transfer_latency_ms"},
		},
		{
			// F4 histogram form, same name: the histogram signal only.
			file: "f4_kv_histogram.prom",
			role: sources.RolePrefill,
			hists: map[sources.Signal]wantHist{
				sources.SigKVXferLatency: {bounds: kvLatencyBounds, counts: cat([]float64{0, 0, 3, 6, 9}, rep(10, 8)), sum: 131, count: 10},
			},
			sources: map[sources.Signal]string{sources.SigKVXferLatency: "sglang:kv_transfer_latency_ms"},
		},
		{
			file: "worker_2026_prefill.prom",
			role: sources.RolePrefill,
			points: map[pk]float64{
				// dp 0 (tp 0,1 copies: 3,3) + dp 1 (tp 2,3 copies: 5,4) — not 15.
				{sources.SigRunning, ""}: 8,
				// priority="" only: 7 + 2 (all priorities would give 18).
				{sources.SigWaiting, ""}:        9,
				{sources.SigBootstrapQueue, ""}: 3,
				{sources.SigInflightQueue, ""}:  4,
				// max over dp_rank of token_usage (kv_cache_usage_perc is second).
				{sources.SigKVUsage, ""}:            0.61,
				{sources.SigKVCapacity, ""}:         800000,
				{sources.SigKVUsedTokens, ""}:       412000,
				{sources.SigKVEvictableTokens, ""}:  1500,
				{sources.SigGenThroughputGauge, ""}: 0,
				{sources.SigCacheHitLastBatch, ""}:  0.5,
				{sources.SigMaxRunningRequests, ""}: 256,
				{sources.SigRetractedGauge, ""}:     1,
				{sources.SigEngineStartupTime, ""}:  41.25,
				// Tokenizer counters: Σ is_streaming, Σ cache_source.
				{sources.SigPromptTokens, ""}:     64000,
				{sources.SigGenerationTokens, ""}: 120,
				{sources.SigCachedTokens, ""}:     36000,
				{sources.SigRequests, ""}:         120,
				{sources.SigAborted, ""}:          3,
				// Scheduler counters: dedupe tp_rank, Σ dp_rank (and stage, category).
				{sources.SigRetractions, ""}:            1,
				{sources.SigTransferFailed, ""}:         1,
				{sources.SigBootstrapFailed, ""}:        3,
				{sources.SigPrefillRetries, ""}:         3,
				{sources.SigKVXferTimeouts, ""}:         4,
				{sources.SigRealtimePrefillCompute, ""}: 1500,
				{sources.SigRealtimePrefillCache, ""}:   4500,
				{sources.SigRealtimeDecode, ""}:         0,
				{sources.SigEffectiveInput, ""}:         1350,
				{sources.SigEffectiveDeviceHit, ""}:     3700,
				{sources.SigEffectiveHostHit, ""}:       600,
				{sources.SigForwardSeconds, ""}:         225.75,
			},
			hists: map[sources.Signal]wantHist{
				// dp 0 keeps tp 0 (10 obs, not tp 1's 6), dp 1 keeps tp 2 (9, not 8).
				sources.SigKVXferLatency: {bounds: kvLatencyBounds,
					counts: cat([]float64{0, 1, 5, 10, 15, 18}, rep(19, 7)), sum: 431, count: 19},
				sources.SigKVXferSpeed: {bounds: kvSpeedBounds,
					counts: cat([]float64{0, 0, 0, 2, 6, 15}, rep(19, 5)), sum: 380, count: 19},
				sources.SigKVXferSize: {bounds: kvSizeBounds,
					counts: cat([]float64{0, 0, 0, 2, 17}, rep(19, 5)), sum: 1520, count: 19},
				sources.SigQueueTime: {bounds: []float64{0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, inf},
					counts: cat([]float64{0, 4, 10, 16, 22, 26}, rep(32, 5)), sum: 48, count: 32},
				// Σ is_streaming.
				sources.SigTTFT: {bounds: ttftBounds,
					counts: cat([]float64{32, 65, 90, 104, 111, 115, 119}, rep(120, 12)), sum: 52.5, count: 120},
				sources.SigE2E: {bounds: e2eBounds,
					counts: cat([]float64{21, 54, 84, 101, 110, 115, 119}, rep(120, 16)), sum: 59, count: 120},
			},
			sources: map[sources.Signal]string{
				sources.SigRunning:        "sglang:num_running_reqs",
				sources.SigWaiting:        "sglang:num_queue_reqs",
				sources.SigBootstrapQueue: "sglang:num_prefill_bootstrap_queue_reqs",
				sources.SigInflightQueue:  "sglang:num_prefill_inflight_queue_reqs",
				sources.SigKVUsage:        "sglang:token_usage",
				sources.SigKVUsedTokens:   "sglang:num_used_tokens",
				sources.SigRetractions:    "sglang:num_retracted_requests_total",
				sources.SigForwardSeconds: "sglang:forward_execution_seconds_total",
				sources.SigKVXferLatency:  "sglang:kv_transfer_latency_ms",
			},
			pids: []string{"4101", "4102", "4103", "4104"},
			markers: map[string]float64{
				"sglang:engine_startup_time":                               41.25,
				`sglang:startup_time_seconds{phase="kv_cache_allocation"}`: 3.25,
				`sglang:startup_time_seconds{phase="load_weight"}`:         12.5,
			},
		},
		{
			// Decode worker: cached_tokens_total absent next to prompt tokens
			// stays absent; ITL never on prefill, present here.
			file: "worker_2026_decode.prom",
			role: sources.RoleDecode,
			points: map[pk]float64{
				{sources.SigRunning, ""}:                58,
				{sources.SigWaiting, ""}:                0,
				{sources.SigPreallocQueue, ""}:          5,
				{sources.SigTransferQueue, ""}:          1,
				{sources.SigPendingPrealloc, ""}:        0.12,
				{sources.SigKVUsage, ""}:                0.91,
				{sources.SigKVCapacity, ""}:             1200000,
				{sources.SigGenThroughputGauge, ""}:     2900.75,
				{sources.SigMaxRunningRequests, ""}:     512,
				{sources.SigRetractions, ""}:            12,
				{sources.SigTransferFailed, ""}:         1,
				{sources.SigRetractedGauge, ""}:         3,
				{sources.SigRealtimeDecode, ""}:         170000,
				{sources.SigRealtimePrefillCompute, ""}: 0,
				{sources.SigRealtimePrefillCache, ""}:   0,
				{sources.SigPromptTokens, ""}:           64000,
				{sources.SigGenerationTokens, ""}:       170000,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigITL: {bounds: itlBounds,
					counts: cat([]float64{0, 0, 0, 100, 2000, 60000, 120000, 150000, 160000, 165000, 168000, 169500, 169900}, rep(170000, 11)),
					sum:    3400, count: 170000},
			},
			sources: map[sources.Signal]string{sources.SigITL: "sglang:inter_token_latency_seconds"},
			pids:    []string{"5201", "5202", "5203", "5204"},
		},
		{
			// Mid-2025: typo name, old prealloc name, KV-transfer gauges
			// (tp copies collapsed, then the mean over what remains),
			// total_retracted_reqs as the retraction counter, "unified" role.
			file: "worker_mid2025_prefill.prom",
			points: map[pk]float64{
				{sources.SigRunning, ""}:            2,
				{sources.SigWaiting, ""}:            5,
				{sources.SigInflightQueue, ""}:      3,
				{sources.SigBootstrapQueue, ""}:     1,
				{sources.SigKVUsage, ""}:            0.3,
				{sources.SigKVUsedTokens, ""}:       120000,
				{sources.SigCacheHitLastBatch, ""}:  0,
				{sources.SigGenThroughputGauge, ""}: 0,
				{sources.SigRetractions, ""}:        4,
				{sources.SigKVXferSpeedGauge, ""}:   18.25,
				{sources.SigKVXferLatencyGauge, ""}: 12.5,
				{sources.SigKVXferSizeGauge, ""}:    96,
				{sources.SigBootstrapFailed, ""}:    2,
				{sources.SigPromptTokens, ""}:       500000,
				{sources.SigGenerationTokens, ""}:   1200,
				{sources.SigCachedTokens, ""}:       125000,
				{sources.SigRequests, ""}:           1200,
			},
			hists: map[sources.Signal]wantHist{
				sources.SigTTFT: {bounds: []float64{0.1, 0.25, 0.5, 1, inf}, counts: []float64{100, 400, 900, 1150, 1200}, sum: 600, count: 1200},
			},
			sources: map[sources.Signal]string{
				sources.SigInflightQueue:      "sglang:num_prefill_infight_queue_reqs",
				sources.SigBootstrapQueue:     "sglang:num_prefill_prealloc_queue_reqs",
				sources.SigRetractions:        "sglang:total_retracted_reqs",
				sources.SigKVXferLatencyGauge: "sglang:kv_transfer_latency_ms",
			},
		},
		{
			// v0.3: name= label, old gauge names, cache_hit_rate in percent.
			file: "worker_v03.prom",
			points: map[pk]float64{
				{sources.SigRunning, ""}:            3,
				{sources.SigWaiting, ""}:            1,
				{sources.SigCacheHitLastBatch, ""}:  0.8758,
				{sources.SigMaxRunningRequests, ""}: 4097,
			},
			sources: map[sources.Signal]string{
				sources.SigRunning: "sglang:num_requests_running",
				sources.SigWaiting: "sglang:num_requests_waiting",
			},
		},
		{
			// _created gauge families are start markers, never signals.
			file: "worker_created.prom",
			points: map[pk]float64{
				{sources.SigRequests, ""}:     10,
				{sources.SigPromptTokens, ""}: 1000,
			},
			markers: map[string]float64{
				"sglang:num_requests_created":  1.7634e+09,
				"sglang:prompt_tokens_created": 1.76340001e+09,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			obs := mapFile(t, c.file)
			if obs.Generation != GenSGLangWorker || obs.Engine != EngineSGLang {
				t.Fatalf("recognised as %q/%q, want %q/%q", obs.Generation, obs.Engine, GenSGLangWorker, EngineSGLang)
			}
			if obs.EngineRole != c.role {
				t.Errorf("EngineRole = %v, want %v", obs.EngineRole, c.role)
			}
			wantPoints(t, obs, c.points)
			wantHists(t, obs, c.hists)
			wantSources(t, obs, c.sources)
			checkSourcesMatch(t, obs)
			if !reflect.DeepEqual(obs.PIDs, c.pids) {
				t.Errorf("PIDs = %v, want %v", obs.PIDs, c.pids)
			}
			if !reflect.DeepEqual(obs.StartMarkers, c.markers) {
				t.Errorf("StartMarkers = %v, want %v", obs.StartMarkers, c.markers)
			}
		})
	}
}

// The large benchmark body (random values) must map without surprises.
func TestMapWorkerLarge(t *testing.T) {
	obs := mapFile(t, "sglang-worker-large.prom")
	if obs.Generation != GenSGLangWorker || obs.EngineRole != sources.RolePrefill {
		t.Fatalf("got %q role %v", obs.Generation, obs.EngineRole)
	}
	checkSourcesMatch(t, obs)
	got := map[sources.Signal]bool{}
	for _, h := range obs.Hists {
		got[h.Signal] = true
	}
	for _, sig := range []sources.Signal{sources.SigTTFT, sources.SigITL, sources.SigQueueTime, sources.SigE2E,
		sources.SigKVXferLatency, sources.SigKVXferSpeed, sources.SigKVXferSize} {
		if !got[sig] {
			t.Errorf("hist %v absent", sig)
		}
	}
	for _, p := range obs.Points {
		if p.Signal == sources.SigKVXferLatencyGauge || p.Signal == sources.SigKVXferSpeedGauge || p.Signal == sources.SigKVXferSizeGauge {
			t.Errorf("histogram-typed kv_transfer family fed the gauge signal %v", p.Signal)
		}
	}
	if obs.StartMarkers["sglang:engine_startup_time"] == 0 {
		t.Errorf("engine_startup_time marker missing: %v", obs.StartMarkers)
	}
}

// `sglang:` and `sglang_` are one key: the same body in either spelling
// maps to the same signals and values, with Sources naming the spelling.
func TestColonAndUnderscoreSpellings(t *testing.T) {
	for _, file := range []string{"worker_2026_prefill.prom", "worker_mid2025_prefill.prom", "f1_early2025.prom"} {
		t.Run(file, func(t *testing.T) {
			colon := mapFile(t, file)
			body := readFixture(t, file)
			under := mapBody(t, bytesReplace(body, "sglang:", "sglang_"))
			if !reflect.DeepEqual(colon.Points, under.Points) || !reflect.DeepEqual(colon.Hists, under.Hists) {
				t.Fatalf("spellings disagree:\n colon %v\n under %v", colon.Points, under.Points)
			}
			for sig, name := range colon.Sources {
				if want := "sglang_" + name[len("sglang:"):]; under.Sources[sig] != want {
					t.Errorf("Sources[%v] = %q, want %q", sig, under.Sources[sig], want)
				}
			}
		})
	}
}
