package panels

import (
	"fmt"
	"math"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
)

// sampleTime is the fixed clock of every test snapshot.
var sampleTime = time.Date(2026, 3, 14, 3, 12, 45, 0, time.UTC)

func rd(v float64, src string) sources.Reading {
	return sources.Reading{Present: true, Value: v, Source: src}
}

func ctr(v, window float64, src string) sources.Reading {
	return sources.Reading{Present: true, Value: v, Increase: v * window, Source: src}
}

func hist(p50, p90, p99, mean, count float64, unit, src string) sources.Quantiles {
	return sources.Quantiles{Present: true, P50: p50, P90: p90, P99: p99, Mean: mean,
		Count: count, Form: "histogram", Unit: unit, Source: src}
}

func gaugeForm(v float64, unit, src string) sources.Quantiles {
	nan := math.NaN()
	return sources.Quantiles{Present: true, P50: nan, P90: nan, P99: nan, Mean: v,
		Form: "gauge", Unit: unit, Source: src}
}

// wave is a deterministic series of n points: base + amp·sin, with NaN gaps
// in [gapFrom, gapTo).
func wave(n int, base, amp, period float64, gapFrom, gapTo int) []float64 {
	out := make([]float64, n)
	for i := range out {
		if i >= gapFrom && i < gapTo {
			out[i] = math.NaN()
			continue
		}
		out[i] = base + amp*math.Sin(float64(i)/period) + amp/3*math.Sin(float64(i)/(period/3.7))
	}
	return out
}

// withBuckets gives the decode pool's TTFT and ITL the window buckets a
// store derives (for goodput): cumulative shares consistent with their
// p50/p99.
func withBuckets(s *sources.Snapshot) {
	bounds := []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, math.Inf(1)}
	shares := map[sources.Signal][]float64{
		sources.SigTTFT: {0, 0, 0.02, 0.2, 0.55, 0.9, 0.995, 1, 1},
		sources.SigITL:  {0.1, 0.7, 0.97, 0.995, 1, 1, 1, 1, 1},
	}
	for sig, sh := range shares {
		q, ok := s.Decode.Dists[sig]
		if !ok {
			continue
		}
		q.Buckets = nil
		for i, b := range bounds {
			q.Buckets = append(q.Buckets, sources.Bucket{UpperBound: b, Count: sh[i] * q.Count})
		}
		s.Decode.Dists[sig] = q
	}
}

// sampleSnapshot is a realistic PD fleet: two gateway replicas (legacy
// sgl-router with predicted hits, smg with none), two prefill workers (one
// restarted, on an old version with gauge-form KV transfer and no
// queue-time histogram) and two decode workers (one stale after a timeout).
func sampleSnapshot() *sources.Snapshot {
	const win = 300.0 // seconds
	now := sampleTime
	step := 2 * time.Second
	n := 150

	target := func(name, addr string, role sources.Role, gen string) sources.TargetStatus {
		return sources.TargetStatus{
			ID: "http://" + addr + "/metrics", Name: name, Role: role, Origin: sources.OriginFlag,
			Health: sources.Up, LastSuccess: now.Add(-400 * time.Millisecond), Age: 400 * time.Millisecond,
			Duration: 6 * time.Millisecond, Generation: gen, Engine: "sglang",
		}
	}

	gwA := sources.GatewayView{
		TargetStatus: target("gw-a", "10.0.0.2:29000", sources.RoleGateway, "sgl-router (legacy)"),
		Readings: sources.Readings{
			sources.SigGWOffered:          ctr(40.0, win, "sgl_router_requests_total"),
			sources.SigGWRetries:          ctr(0.8, win, "sgl_router_retries_total"),
			sources.SigGWRetriesExhausted: ctr(0.1, win, "sgl_router_retries_exhausted_total"),
			sources.SigGWInFlight:         rd(31, "sgl_router_running_requests"),
		},
		Responses: map[string]sources.Reading{
			"2xx": ctr(38.2, win, "sgl_router_http_responses_total"),
			"429": ctr(1.5, win, "sgl_router_http_responses_total"),
			"5xx": ctr(0.3, win, "sgl_router_http_responses_total"),
		},
		Predicted: sources.HitRatio{Present: true, Ratio: 0.62, Hit: 7440, Total: 12000,
			Unit: "requests", Source: "sgl_router_cache_hits_total / (hits + misses)"},
		PredictedHistory: wave(n, 0.62, 0.05, 9, 0, 0),
		Workers:          []string{"10.0.0.11:30001", "10.0.0.12:30001", "10.0.0.21:30011", "10.0.0.22:30011"},
	}
	gwA.TargetStatus.Engine = "sgl-router"
	gwB := sources.GatewayView{
		TargetStatus: target("gw-b", "10.0.0.3:29000", sources.RoleGateway, "smg gateway"),
		Readings: sources.Readings{
			sources.SigGWOffered:          ctr(37.3, win, "smg_http_requests_total"),
			sources.SigGWRetries:          ctr(0.3, win, "smg_worker_retries_total"),
			sources.SigGWRetriesExhausted: ctr(0, win, "smg_worker_retries_exhausted_total"),
		},
		Responses: map[string]sources.Reading{
			"2xx": ctr(36.5, win, "smg_http_responses_total"),
			"408": ctr(0.1, win, "smg_http_responses_total"),
			"429": ctr(0, win, "smg_http_responses_total"),
			"5xx": ctr(0.2, win, "smg_http_responses_total"),
		},
		Workers: gwA.Workers,
	}
	gwB.TargetStatus.Engine = "smg"

	router := func(replica string, inflight, picks, health, cb float64) sources.RouterView {
		return sources.RouterView{Replica: replica,
			InFlight: rd(inflight, "router in-flight"), Picks: ctr(picks, win, "picks"),
			Health: rd(health, "health"), CB: rd(cb, "cb state")}
	}

	p0 := sources.WorkerView{
		TargetStatus: target("prefill-0", "10.0.0.11:30001", sources.RolePrefill, "sglang worker"),
		Readings: sources.Readings{
			sources.SigRunning:           rd(4, "sglang:num_running_reqs"),
			sources.SigWaiting:           rd(7, "sglang:num_queue_reqs"),
			sources.SigBootstrapQueue:    rd(2, "sglang:num_prefill_bootstrap_queue_reqs"),
			sources.SigInflightQueue:     rd(1, "sglang:num_prefill_inflight_queue_reqs"),
			sources.SigPromptTokens:      ctr(14200, win, "sglang:prompt_tokens_total"),
			sources.SigCachedTokens:      ctr(5820, win, "sglang:cached_tokens_total"),
			sources.SigCacheHitLastBatch: rd(0.52, "sglang:cache_hit_rate"),
			sources.SigRequests:          ctr(21, win, "sglang:num_requests_total"),
			sources.SigTransferFailed:    ctr(0, win, "sglang:num_transfer_failed_reqs_total"),
			sources.SigBootstrapFailed:   ctr(0.02, win, "sglang:num_bootstrap_failed_reqs_total"),
			sources.SigKVXferTimeouts:    ctr(0, win, "sglang:kv_transfer_timeouts_total"),
			sources.SigKVUsage:           rd(0.12, "sglang:token_usage"),
			// As the store derives it from used + evictable ÷ capacity.
			sources.SigKVResident: rd(0.97, "(KV used + KV evictable) ÷ KV capacity"),
		},
		Dists: map[sources.Signal]sources.Quantiles{
			sources.SigQueueTime:     hist(0.18, 0.9, 1.4, 0.31, 6300, "s", "sglang:queue_time_seconds"),
			sources.SigKVXferLatency: hist(12, 30, 48, 15, 6200, "ms", "sglang:kv_transfer_latency_ms"),
			sources.SigKVXferSpeed:   hist(17, 24, 31, 18.5, 6200, "GB/s", "sglang:kv_transfer_speed_gb_s"),
			sources.SigKVXferSize:    hist(38, 70, 120, 42, 6200, "MB", "sglang:kv_transfer_total_mb"),
		},
		Hit: sources.HitRatio{Present: true, Ratio: 0.41, Hit: 1.05e6, Total: 2.56e6, Unit: "tokens",
			Source: "cached_tokens_total / prompt_tokens_total"},
		Router: []sources.RouterView{
			router("gw-a", 3, 9.8, 1, 0),
			router("gw-b", 2, 10.2, 1, 0),
		},
		HitHistory: wave(n, 0.41, 0.04, 7, 0, 0),
	}
	p0.Router[1].EngineHit = rd(0.52, "smg_engine_cache_hit_rate")

	p1 := sources.WorkerView{
		TargetStatus: target("prefill-1", "10.0.0.12:30001", sources.RolePrefill, "sglang worker (2025)"),
		Readings: sources.Readings{
			sources.SigRunning:           rd(3, "sglang:num_running_reqs"),
			sources.SigWaiting:           rd(2, "sglang:num_queue_reqs"),
			sources.SigInflightQueue:     rd(0, "sglang:num_prefill_infight_queue_reqs"),
			sources.SigPromptTokens:      {Source: "sglang:prompt_tokens_total"}, // one sample since restart
			sources.SigCacheHitLastBatch: rd(0.05, "sglang:cache_hit_rate"),
			sources.SigTransferFailed:    ctr(0.01, win, "sglang:num_transfer_failed_reqs_total"),
			sources.SigBootstrapFailed:   ctr(0, win, "sglang:num_bootstrap_failed_reqs_total"),
			sources.SigKVUsage:           rd(0.04, "sglang:token_usage"), // a 2025 worker: no evictable split
		},
		Dists: map[sources.Signal]sources.Quantiles{
			sources.SigKVXferLatency: gaugeForm(31, "ms", "sglang:kv_transfer_latency_ms"),
			sources.SigKVXferSpeed:   gaugeForm(6.2, "GB/s", "sglang:kv_transfer_speed_gb_s"),
			sources.SigKVXferSize:    gaugeForm(40, "MB", "sglang:kv_transfer_total_mb"),
		},
		// Since the restart, as the store derives it (HitRatio.Since).
		Hit: sources.HitRatio{Present: true, Ratio: 0.03, Hit: 2400, Total: 80000, Unit: "tokens",
			Source: "cached_tokens_total / prompt_tokens_total, since the restart", Since: now.Add(-3*time.Minute - 13*time.Second)},
		HitWindow: sources.HitRatio{Present: true, Ratio: 0.31, Hit: 0.31e6, Total: 1e6, Unit: "tokens",
			Source: "cached_tokens_total / prompt_tokens_total"},
		Router: []sources.RouterView{
			router("gw-a", 1, 4.1, 1, 0),
			router("gw-b", 0, 2.2, 1, 2),
		},
		Restarted: true,
		// As the store derives it from the two views.
		Disagree: "gw-a ok, gw-b CB half-open",
	}
	p1.Restarts = 1
	p1.LastRestart = now.Add(-3*time.Minute - 13*time.Second)
	p1.Router[1].EngineHit = rd(0.05, "smg_engine_cache_hit_rate")

	d0 := sources.WorkerView{
		TargetStatus: target("decode-0", "10.0.0.21:30011", sources.RoleDecode, "sglang worker"),
		Readings: sources.Readings{
			sources.SigRunning:          rd(52, "sglang:num_running_reqs"),
			sources.SigWaiting:          rd(0, "sglang:num_queue_reqs"),
			sources.SigPreallocQueue:    rd(3, "sglang:num_decode_prealloc_queue_reqs"),
			sources.SigTransferQueue:    rd(1, "sglang:num_decode_transfer_queue_reqs"),
			sources.SigKVUsage:          rd(0.78, "sglang:token_usage"),
			sources.SigKVCapacity:       rd(600000, "sglang:max_total_num_tokens"),
			sources.SigGenerationTokens: ctr(2300, win, "sglang:generation_tokens_total"),
			sources.SigRetractions:      ctr(0.05, win, "sglang:num_retracted_reqs_total"),
			sources.SigTransferFailed:   ctr(0.02, win, "sglang:num_transfer_failed_reqs_total"),
			sources.SigBootstrapFailed:  ctr(0, win, "sglang:num_bootstrap_failed_reqs_total"),
			sources.SigKVXferTimeouts:   ctr(0.01, win, "sglang:kv_transfer_timeouts_total"),
		},
		Dists: map[sources.Signal]sources.Quantiles{
			sources.SigITL:  hist(0.031, 0.06, 0.085, 0.036, 690000, "s", "sglang:inter_token_latency_seconds"),
			sources.SigTTFT: hist(0.42, 1.1, 1.9, 0.6, 6100, "s", "sglang:time_to_first_token_seconds"),
		},
		// As the store derives it: this worker exposes no per-batch counter.
		Output: ctr(2300, win, "sglang:generation_tokens_total (finished requests)"),
		Router: []sources.RouterView{router("gw-a", 14, 20.5, 1, 0), router("gw-b", 12, 19.1, 1, 0)},
	}
	d1 := sources.WorkerView{
		TargetStatus: target("decode-1", "10.0.0.22:30011", sources.RoleDecode, "sglang worker"),
		Readings: sources.Readings{
			sources.SigRunning:          rd(44, "sglang:num_running_reqs"),
			sources.SigPreallocQueue:    rd(1, "sglang:num_decode_prealloc_queue_reqs"),
			sources.SigTransferQueue:    rd(1, "sglang:num_decode_transfer_queue_reqs"),
			sources.SigKVUsage:          rd(0.93, "sglang:token_usage"),
			sources.SigGenerationTokens: ctr(1800, win, "sglang:generation_tokens_total"),
			sources.SigRetractions:      ctr(0.4, win, "sglang:num_retracted_reqs_total"),
			sources.SigTransferFailed:   ctr(0, win, "sglang:num_transfer_failed_reqs_total"),
		},
		Dists: map[sources.Signal]sources.Quantiles{
			sources.SigITL: hist(0.044, 0.09, 0.16, 0.05, 520000, "s", "sglang:inter_token_latency_seconds"),
		},
		Output:   ctr(1800, win, "sglang:generation_tokens_total (finished requests)"),
		Router:   []sources.RouterView{router("gw-a", 0, 0, 0, 1), router("gw-b", 9, 15.2, 1, 0)},
		Disagree: "gw-a unhealthy CB open, gw-b ok",
	}
	d1.Health = sources.Stale
	d1.Age = 12 * time.Second
	d1.LastSuccess = now.Add(-12 * time.Second)
	d1.LastError = &sources.ScrapeError{Class: sources.ErrTimeout,
		Message: "GET http://10.0.0.22:30011/metrics: context deadline exceeded after 2s"}

	s := &sources.Snapshot{
		Time: now, Window: 5 * time.Minute, Interval: time.Second,
		Workers:  []sources.WorkerView{p0, p1, d0, d1},
		Gateways: []sources.GatewayView{gwA, gwB},
		Prefill: sources.PoolView{Role: sources.RolePrefill, Workers: 2, Up: 2,
			Readings: sources.Readings{
				sources.SigRunning:        rd(7, ""),
				sources.SigWaiting:        rd(9, ""),
				sources.SigBootstrapQueue: rd(2, ""),
				sources.SigInflightQueue:  rd(1, ""),
				sources.SigPromptTokens:   ctr(14200, win, "sglang:prompt_tokens_total"),
				sources.SigTransferFailed: ctr(0.01, win, ""),
				sources.SigKVUsage:        rd(0.12, ""),
				sources.SigKVResident:     rd(0.97, ""),
			},
			Hit: sources.HitRatio{Present: true, Ratio: 0.40, Hit: 1.05e6, Total: 2.64e6, Unit: "tokens",
				Source: "cached_tokens_total / prompt_tokens_total"},
			Dists: map[sources.Signal]sources.Quantiles{
				sources.SigQueueTime: hist(0.18, 0.9, 1.4, 0.31, 6300, "s", "sglang:queue_time_seconds"),
			},
		},
		Decode: sources.PoolView{Role: sources.RoleDecode, Workers: 2, Up: 1,
			Readings: sources.Readings{
				sources.SigRunning:          rd(96, ""),
				sources.SigPreallocQueue:    rd(4, ""),
				sources.SigTransferQueue:    rd(2, ""),
				sources.SigKVUsage:          rd(0.93, ""),
				sources.SigGenerationTokens: ctr(4100, win, ""),
				sources.SigRetractions:      ctr(0.45, win, ""),
			},
			Output: ctr(4100, win, "sglang:generation_tokens_total (finished requests)"),
			Dists: map[sources.Signal]sources.Quantiles{
				sources.SigITL:  hist(0.036, 0.07, 0.12, 0.04, 1.21e6, "s", "sglang:inter_token_latency_seconds"),
				sources.SigTTFT: hist(0.42, 1.1, 1.9, 0.6, 6100, "s", "sglang:time_to_first_token_seconds"),
			},
		},
		Fleet: sources.Fleet{TargetsUp: 5, Targets: 6,
			ReqRate:    ctr(77.3, win, ""),
			InputRate:  ctr(14200, win, ""),
			OutputRate: ctr(4100, win, "sglang:generation_tokens_total (finished requests)"),
			Hit: sources.HitRatio{Present: true, Ratio: 0.40, Hit: 1.05e6, Total: 2.64e6, Unit: "tokens",
				Source: "cached_tokens_total / prompt_tokens_total"},
			Rejected: rd(0.027, ""),
		},
		Charts: map[string]sources.Series{
			"ttft_p50":      {Name: "ttft_p50", Unit: "s", Step: step, Points: wave(n, 0.42, 0.08, 11, 60, 66)},
			"ttft_p99":      {Name: "ttft_p99", Unit: "s", Step: step, Points: wave(n, 1.7, 0.4, 8, 60, 66)},
			"itl_p50":       {Name: "itl_p50", Unit: "s", Step: step, Points: wave(n, 0.034, 0.004, 13, 0, 0)},
			"itl_p99":       {Name: "itl_p99", Unit: "s", Step: step, Points: wave(n, 0.11, 0.03, 7, 0, 0)},
			"input_tps":     {Name: "input_tps", Unit: "tok/s", Step: step, Points: wave(n, 14000, 3000, 10, 0, 0)},
			"output_tps":    {Name: "output_tps", Unit: "tok/s", Step: step, Points: wave(n, 4100, 700, 12, 0, 0)},
			"hit_actual":    {Name: "hit_actual", Unit: "ratio", Step: step, Points: wave(n, 0.40, 0.05, 10, 0, 0)},
			"hit_predicted": {Name: "hit_predicted", Unit: "ratio", Step: step, Points: wave(n, 0.62, 0.05, 9, 0, 0)},
		},
		Events: []sources.Event{
			{Time: now.Add(-4*time.Minute - 50*time.Second), TargetID: "http://10.0.0.22:30011/metrics", Name: "decode-1", Kind: "joined", Detail: "decode from gateway (initial discovery)", Initial: true},
			{Time: now.Add(-3*time.Minute - 13*time.Second), TargetID: p1.ID, Name: "prefill-1", Kind: "restart", Detail: "new scheduler pid 4242"},
			{Time: now.Add(-12 * time.Second), TargetID: d1.ID, Name: "decode-1", Kind: "stale", Detail: "timeout"},
		},
	}
	// Per-tick history (1 s ticks) for the trend columns.
	hist := func(w *sources.WorkerView, sig sources.Signal, pts []float64) {
		if w.History == nil {
			w.History = map[sources.Signal][]float64{}
		}
		w.History[sig] = pts
	}
	ticks := int(s.Window / s.Interval)
	ws := s.Workers
	hist(&ws[0], sources.SigWaiting, wave(ticks, 5, 3, 25, 0, 0))
	hist(&ws[0], sources.SigInflightQueue, wave(ticks, 1.2, 0.8, 19, 0, 0))
	hist(&ws[1], sources.SigWaiting, wave(ticks, 1.5, 1.2, 31, 0, 107)) // restarted
	hist(&ws[1], sources.SigInflightQueue, wave(ticks, 0.5, 0.4, 23, 0, 107))
	hist(&ws[2], sources.SigKVUsage, wave(ticks, 0.72, 0.08, 40, 0, 0))
	hist(&ws[2], sources.SigTransferQueue, wave(ticks, 1, 0.9, 17, 0, 0))
	hist(&ws[3], sources.SigKVUsage, wave(ticks-12, 0.86, 0.06, 35, 0, 0)) // stale: no points for 12 s
	hist(&ws[3], sources.SigTransferQueue, wave(ticks-12, 1.3, 1, 21, 0, 0))
	for i := range ws[3].History {
		ws[3].History[i] = append(ws[3].History[i], wave(12, 0, 0, 1, 0, 12)...)
	}
	// The restart dips the actual hit (cold cache) for a while.
	ha := s.Charts["hit_actual"].Points
	for i := 52; i < 70; i++ {
		ha[i] -= 0.15 * float64(70-i) / 18
	}
	for _, g := range s.Gateways {
		s.Targets = append(s.Targets, g.TargetStatus)
	}
	for _, w := range s.Workers {
		s.Targets = append(s.Targets, w.TargetStatus)
	}
	withBuckets(s)
	diagnose.Run(s)
	return s
}

// bigSnapshot is sampleSnapshot with n extra prefill and decode workers, to
// exercise scrolling.
func bigSnapshot(n int) *sources.Snapshot {
	s := sampleSnapshot()
	var pre, dec []sources.WorkerView
	for _, w := range s.Workers {
		if w.Role == sources.RolePrefill {
			pre = append(pre, w)
		} else {
			dec = append(dec, w)
		}
	}
	base := s.Workers[0]
	for i := 0; i < n; i++ {
		w := base
		w.Name = fmt.Sprintf("prefill-%d", i+2)
		w.ID = fmt.Sprintf("http://10.0.1.%d:30001/metrics", i+2)
		pre = append(pre, w)
		d := s.Workers[2]
		d.Name = fmt.Sprintf("decode-%d", i+2)
		d.ID = fmt.Sprintf("http://10.0.2.%d:30011/metrics", i+2)
		dec = append(dec, d)
	}
	s.Workers = append(pre, dec...)
	s.Prefill.Workers += n
	s.Prefill.Up += n
	s.Decode.Workers += n
	s.Decode.Up += n
	return s
}
