package sim

import (
	"testing"
	"time"
)

// The calibration from issue 3: 4 req/s, 8,000 uncached input tokens and
// 500 output tokens per request, prefill workers doing 10,000 input
// tokens/s and decode workers 800 output tokens/s. Prefill needs
// 4 × 8000 / 10000 = 3.2 workers and decode 4 × 500 / 800 = 2.5, so the
// fleet must saturate below 4 prefill / 3 decode workers and hold its
// latency at and above them. Judged from scraped metrics over minutes
// 4–12 of a 12-minute run.

func calibrationConfig(prefill, decode int) Config {
	k := DefaultCapacity()
	k.PrefillTokensPerSec, k.DecodeTokensPerSec = 10000, 800
	return Config{
		Seed: 42, Prefill: prefill, Decode: decode, Replicas: 1, Scenario: ScenarioSteady,
		Workload: Workload{
			Rate: 4, PrivateDocuments: true, DocTokens: 8000,
			FollowUp: 0, MaxTurns: 1, OutputTokens: 500, OutputCap: 500,
		},
		Capacity: k,
	}
}

type calibration struct {
	ttftP99      float64 // s, decode TTFT over the window
	itl          float64 // s, mean inter-token latency
	rejected     float64 // non-200 responses in the window
	completed    float64 // requests finished per second on decode
	uncachedRate float64 // prefill compute tokens/s
}

func runCalibration(t *testing.T, prefill, decode int) calibration {
	t.Helper()
	f, eps := serveFleet(t, calibrationConfig(prefill, decode))
	f.Step(4 * time.Minute)
	a := scrapeAll(t, eps)
	f.Step(8 * time.Minute)
	b := scrapeAll(t, eps)
	c := calibration{
		ttftP99:      window(a, b, "decode", "sglang:time_to_first_token_seconds", nil).quantile(0.99),
		itl:          window(a, b, "decode", "sglang:inter_token_latency_seconds", nil).mean(),
		rejected:     non200(a, b),
		completed:    delta(a, b, "decode", "sglang:num_requests_total", nil) / (8 * 60),
		uncachedRate: delta(a, b, "prefill", "sglang:realtime_tokens_total", map[string]string{"mode": "prefill_compute"}) / (8 * 60),
	}
	if cached := delta(a, b, "prefill", "sglang:realtime_tokens_total", map[string]string{"mode": "prefill_cache"}); cached != 0 {
		t.Errorf("%d+%d: %v cached prefill tokens in a workload that must be all uncached", prefill, decode, cached)
	}
	t.Logf("%d prefill + %d decode: TTFT p99 %.1fs, ITL %.0fms, %v rejected, %.2f req/s completed, %.0f uncached tokens/s",
		prefill, decode, c.ttftP99, c.itl*1000, c.rejected, c.completed, c.uncachedRate)
	return c
}

func TestCalibration(t *testing.T) {
	cases := []struct {
		prefill, decode int
		holds           bool
	}{
		{3, 6, false}, // prefill-bound: 3 × 10,000 < 32,000 tokens/s
		{4, 6, true},
		{5, 6, true},
		{6, 2, false}, // decode-bound: 2 × 800 < 2,000 tokens/s
		{6, 3, true},
		{6, 4, true},
	}
	for _, tc := range cases {
		t.Run(itoa(tc.prefill)+"p+"+itoa(tc.decode)+"d", func(t *testing.T) {
			t.Parallel()
			c := runCalibration(t, tc.prefill, tc.decode)
			holds := c.rejected == 0 && c.ttftP99 < 10 && c.completed > 0.95*4
			saturated := c.rejected > 0 || c.ttftP99 > 20 || c.completed < 0.9*4
			switch {
			case tc.holds && !holds:
				t.Errorf("want the fleet to hold its latency (no rejections, TTFT p99 < 10 s, ≥ 3.8 req/s done)")
			case !tc.holds && !saturated:
				t.Errorf("want the fleet saturated (rejections, TTFT p99 > 20 s or < 3.6 req/s done)")
			}
		})
	}
}
