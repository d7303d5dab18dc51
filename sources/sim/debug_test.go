package sim

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestDebugDynamics prints a timeline of scraped figures (temporary).
func TestDebugDynamics(t *testing.T) {
	if os.Getenv("SIMDEBUG") == "" {
		t.Skip()
	}
	sc := os.Getenv("SIMDEBUG")
	f, eps := serveFleet(t, Config{Seed: 3, Scenario: sc, Gateway: os.Getenv("SIMGW")})
	fmt.Println("rate", f.Rate())
	prev := scrapeAll(t, eps)
	for i := 0; i < 12; i++ {
		start := time.Now()
		f.Step(30 * time.Second)
		el := time.Since(start)
		cur := scrapeAll(t, eps)
		ttft := cur.poolHist("decode", "sglang:time_to_first_token_seconds", nil).minus(prev.poolHist("decode", "sglang:time_to_first_token_seconds", nil))
		itl := cur.poolHist("decode", "sglang:inter_token_latency_seconds", nil).minus(prev.poolHist("decode", "sglang:inter_token_latency_seconds", nil))
		d := func(p, n string, m map[string]string) float64 { return cur.poolSum(p, n, m) - prev.poolSum(p, n, m) }
		fmt.Printf("t=%v cpu=%v reqs=%.0f 200=%.0f R429=%.0f R503=%.0f retries=%.0f hit=%.2f pred=%.2f ttft p50=%.2f p99=%.2f itl=%.3f | pwait=%.0f pboot=%.0f pinfl=%.0f | dpre=%.0f dxfer=%.0f drun=%.0f dq=%.0f use=%.2f retr=%.0f evict=%.0f xfail=%.0f\n",
			f.Now(), el.Round(time.Millisecond),
			d("gateway", "smg_http_requests_total", nil),
			d("gateway", "smg_http_responses_total", map[string]string{"status_code": "200"}),
			d("gateway", "smg_http_responses_total", map[string]string{"status_code": "429"}),
			d("gateway", "smg_http_responses_total", map[string]string{"status_code": "503"}),
			d("gateway", "smg_worker_retries_total", nil),
			hitRatio(prev, cur, "prefill"),
			d("gateway", "sgl_router_cache_hits_total", nil)/(d("gateway", "sgl_router_cache_hits_total", nil)+d("gateway", "sgl_router_cache_misses_total", nil)),
			ttft.quantile(0.5), ttft.quantile(0.99), itl.mean(),
			cur.poolSum("prefill", "sglang:num_queue_reqs", nil),
			cur.poolSum("prefill", "sglang:num_prefill_bootstrap_queue_reqs", nil),
			cur.poolSum("prefill", "sglang:num_prefill_inflight_queue_reqs", nil),
			cur.poolSum("decode", "sglang:num_decode_prealloc_queue_reqs", nil),
			cur.poolSum("decode", "sglang:num_decode_transfer_queue_reqs", nil),
			cur.poolSum("decode", "sglang:num_running_reqs", nil),
			cur.poolSum("decode", "sglang:num_queue_reqs", nil),
			cur.poolSum("decode", "sglang:token_usage", nil)/4,
			d("decode", "sglang:num_retracted_requests_total", nil),
			d("prefill", "sglang:evicted_tokens_total", nil),
			d("", "sglang:num_transfer_failed_reqs_total", nil),
		)
		prev = cur
	}
}

func TestDebugPerTarget(t *testing.T) {
	if os.Getenv("SIMDETAIL") == "" {
		t.Skip()
	}
	f, eps := serveFleet(t, Config{Seed: 1, Scenario: os.Getenv("SIMDETAIL"), Gateway: os.Getenv("SIMGW")})
	prev := scrapeAll(t, eps)
	for i := 0; i < 10; i++ {
		f.Step(30 * time.Second)
		eps = f.Endpoints()
		cur := snapshot{}
		for _, e := range eps {
			code, body := get(t, e.MetricsURL)
			if code == 200 {
				cur[e.Name] = parse(t, body)
			}
		}
		fmt.Printf("t=%v\n", f.Now())
		for _, e := range eps {
			fs, ok := cur[e.Name]
			if !ok {
				fmt.Printf("  %s DOWN\n", e.Name)
				continue
			}
			pf := prev[e.Name]
			if pf == nil {
				pf = families{}
			}
			dd := func(n string, m map[string]string) float64 { return fs.sum(n, m) - pf.sum(n, m) }
			switch {
			case e.Role.String() == "gateway":
				fmt.Printf("  %s in=%.0f hits=%.0f miss=%.0f", e.Name, dd("smg_http_requests_total", nil)+dd("sgl_router_pd_requests_total", nil), dd("sgl_router_cache_hits_total", nil), dd("sgl_router_cache_misses_total", nil))
				for _, w := range eps {
					if w.Role.String() == "gateway" {
						continue
					}
					m := map[string]string{"worker": w.BaseURL}
					fmt.Printf(" [%s h=%.0f cb=%.0f l=%.0f ok=%.0f]", w.Name, fs.sum("smg_worker_health", m)+fs.sum("sgl_router_worker_health", m), fs.sum("smg_worker_cb_state", m)+fs.sum("sgl_router_cb_state", m), fs.sum("smg_worker_requests_active", m)+fs.sum("sgl_router_running_requests", m), dd("smg_worker_cb_outcomes_total", map[string]string{"worker": w.BaseURL, "outcome": "success"})+dd("sgl_router_cb_outcomes_total", map[string]string{"worker": w.BaseURL, "outcome": "success"}))
				}
				fmt.Println()
			default:
				dc, dp := dd("sglang:cached_tokens_total", nil), dd("sglang:prompt_tokens_total", nil)
				lat := fs.hist("sglang:kv_transfer_latency_ms", nil).minus(pf.hist("sglang:kv_transfer_latency_ms", nil))
				fmt.Printf("  %s pid=%s reqs=%.0f hit=%.2f compute=%.0f wait=%.0f boot=%.0f infl=%.0f pre=%.0f xq=%.0f run=%.0f use=%.2f evict=%.0f xfail=%.0f tmo=%.0f kvlat=%.0fms\n", e.Name,
					fs.label("sglang:num_retracted_reqs", "pid", nil), dd("sglang:num_requests_total", nil), dc/dp, dd("sglang:realtime_tokens_total", map[string]string{"mode": "prefill_compute"}),
					fs.sum("sglang:num_queue_reqs", nil), fs.sum("sglang:num_prefill_bootstrap_queue_reqs", nil), fs.sum("sglang:num_prefill_inflight_queue_reqs", nil),
					fs.sum("sglang:num_decode_prealloc_queue_reqs", nil), fs.sum("sglang:num_decode_transfer_queue_reqs", nil), fs.sum("sglang:num_running_reqs", nil),
					fs.sum("sglang:token_usage", nil), dd("sglang:evicted_tokens_total", nil), dd("sglang:num_transfer_failed_reqs_total", nil), dd("sglang:kv_transfer_timeouts_total", nil), lat.mean())
			}
		}
		prev = cur
	}
}
