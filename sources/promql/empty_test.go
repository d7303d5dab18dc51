package promql

import (
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
)

func newSelectedBackend(t *testing.T, f *fakeProm, selector string) *Backend {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var sel []Matcher
	if selector != "" {
		var err error
		if sel, err = ParseSelector(selector); err != nil {
			t.Fatal(err)
		}
	}
	b, err := New(srv.URL, config.HTTPClientConfig{}, Options{ScrapeInterval: time.Second, Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeProm) asked(sub string) bool { return f.askedBoth(sub, sub) }

// askedBoth reports whether one query contained both a and b.
func (f *fakeProm) askedBoth(a, b string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.seen {
		if strings.Contains(q, a) && strings.Contains(q, b) {
			return true
		}
	}
	return false
}

// A selector that matches no worker is told apart from a server with no
// workers: only then is the server asked how many workers it has without
// the selector, and the snapshot carries the answer for the panels.
func TestEmptyFleetProbesWithoutTheSelector(t *testing.T) {
	probe := "count(group by (instance) (last_over_time({__name__=~"
	f := &fakeProm{routes: []route{{has: []string{probe, "num_running_reqs"}, result: "[" + sample(``, 5) + "]"}}}
	b := newSelectedBackend(t, f, `{job="nope"}`)
	runRound(b)
	s := b.Snapshot(time.Minute)
	qs := s.QueryServer
	if qs == nil || !qs.Probed || qs.Unselected != 5 || qs.Selector != `{job="nope"}` || qs.Metric != "sglang:num_running_reqs" || qs.Target != "prometheus" {
		t.Fatalf("query server %+v", qs)
	}
	if !strings.HasPrefix(qs.Host, "127.0.0.1:") {
		t.Errorf("host %q", qs.Host)
	}
	if !f.asked(probe) || f.askedBoth(probe, `job="nope"`) {
		t.Error("the probe applied the selector")
	}

	// The server has none at all: 0 (an empty answer).
	f = &fakeProm{}
	b = newSelectedBackend(t, f, `{job="nope"}`)
	runRound(b)
	if qs := b.Snapshot(time.Minute).QueryServer; !qs.Probed || qs.Unselected != 0 {
		t.Errorf("no workers anywhere: %+v", qs)
	}

	// No selector: the workers query already asked; no probe is sent.
	f = &fakeProm{}
	b = newSelectedBackend(t, f, "")
	runRound(b)
	if qs := b.Snapshot(time.Minute).QueryServer; !qs.Probed || qs.Unselected != 0 || qs.Selector != "" {
		t.Errorf("no selector: %+v", qs)
	}
	if f.asked(probe) {
		t.Error("probed without a selector")
	}

	// Workers found: no probe.
	f = &fakeProm{routes: []route{{has: []string{`"all"`, `"live"`}, result: "[" + sample(`"engine_type":"decode","pdtop_sig":"all"`, 1) + "]"}}}
	b = newSelectedBackend(t, f, `{job="serving"}`)
	runRound(b)
	if qs := b.Snapshot(time.Minute).QueryServer; qs.Probed || f.asked(probe) {
		t.Errorf("probed with workers: %+v", qs)
	}
}

// The data's start comes from the first charted point: none before the
// chart span's start means the server holds less than a span.
func TestDataSinceFromChartHistory(t *testing.T) {
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	spec := chartSpec{step: 5 * time.Second, span: 5 * time.Second}
	for j := 0; j < 12; j++ {
		spec.ends = append(spec.ends, end.Add(-time.Duration(11-j)*5*time.Second))
	}
	nan := math.NaN()
	pts := func(first int) []float64 {
		out := make([]float64, 12)
		for j := range out {
			out[j] = nan
			if j >= first {
				out[j] = 1
			}
		}
		return out
	}
	h := &history{spec: spec, charts: map[string][]float64{cInput: pts(8), cTTFT50: pts(6), cHit: pts(12)}}
	// ends[6] is 25 s before the end; one step earlier is 30 s; a server
	// clock 2 s ahead of ours moves it 2 s back on the local clock.
	if got, want := dataSince(h, 2*time.Second), end.Add(-32*time.Second); !got.Equal(want) {
		t.Errorf("data since %v, want %v", got, want)
	}
	h.charts[cOutput] = pts(0)
	if got := dataSince(h, 0); !got.IsZero() {
		t.Errorf("data over the whole span: %v", got)
	}
	if got := dataSince(&history{spec: spec, charts: map[string][]float64{cInput: pts(12)}}, 0); !got.IsZero() {
		t.Errorf("nothing charted: %v", got)
	}
	if got := dataSince(nil, 0); !got.IsZero() {
		t.Errorf("no history: %v", got)
	}
}

// The pools' TTFT and ITL distributions get their bucket counts, so
// goodput is read as in direct scraping; a gateway that has answered only
// 2xx gets 0/s of 429, 408 and 5xx (the admission table's columns), as the
// store fills them.
func TestPoolBucketsGiveGoodputAndResponseClasses(t *testing.T) {
	ttft, itl := strconv.Itoa(int(sources.SigTTFT)), strconv.Itoa(int(sources.SigITL))
	bucket := func(sig, le string, rate float64) string {
		return sample(`"engine_type":"decode","pdtop_sig":"`+sig+`","le":"`+le+`"`, rate)
	}
	f := &fakeProm{routes: []route{
		{has: []string{`"all"`, `"live"`}, result: "[" + sample(`"engine_type":"decode","pdtop_sig":"all"`, 1) + "]"},
		{has: []string{"histogram_quantile", "time_to_first_token"}, result: "[" + sample(`"engine_type":"decode","pdtop_q":"count"`, 60) + "]"},
		{has: []string{"histogram_quantile", "inter_token_latency"}, result: "[" + sample(`"engine_type":"decode","pdtop_q":"count"`, 6000) + "]"},
		{has: []string{"time_to_first_token_seconds_bucket", "inter_token_latency_seconds_bucket"}, result: "[" +
			bucket(ttft, "1", 0.5) + "," + bucket(ttft, "2", 0.9) + "," + bucket(ttft, "+Inf", 1) + "," +
			bucket(itl, "0.05", 80) + "," + bucket(itl, "+Inf", 100) + "]"},
		{has: []string{"group by (instance, __name__)"}, result: "[" + sample(`"__name__":"smg_http_responses_total","instance":"gw:29000"`, 1) + "]"},
		{has: []string{"smg_http_responses_total", `"status_code"`}, result: "[" +
			sample(`"instance":"gw:29000","status_code":"200","pdtop_key":"status_code","pdtop_sig":"`+strconv.Itoa(int(sources.SigGWResponses))+`"`, 1) + "]"},
	}}
	b := newSelectedBackend(t, f, "")
	runRound(b)
	s := b.Snapshot(time.Minute)
	q := s.Decode.Dists[sources.SigTTFT]
	if len(q.Buckets) != 3 || q.Buckets[0] != (sources.Bucket{UpperBound: 1, Count: 30}) || !math.IsInf(q.Buckets[2].UpperBound, 1) || q.Buckets[2].Count != 60 {
		t.Fatalf("TTFT buckets %+v", q.Buckets)
	}
	g := s.Diagnosis.Admission.Goodput
	// TTFT ≤ 2 s: 0.9; ITL ≤ 50 ms: 0.8 — product 0.72.
	if !g.Present || math.Abs(g.TTFT.Est-0.9) > 1e-9 || math.Abs(g.ITL.Est-0.8) > 1e-9 || math.Abs(g.Share.Est-0.72) > 1e-9 {
		t.Errorf("goodput %+v", g)
	}
	if len(s.Gateways) != 1 {
		t.Fatalf("gateways %+v", s.Gateways)
	}
	for _, class := range []string{"2xx", "429", "408", "5xx"} {
		if r, ok := s.Gateways[0].Responses[class]; !ok || !r.Present {
			t.Errorf("responses[%s] = %+v", class, r)
		}
	}
	if r := s.Gateways[0].Responses["429"]; r.Value != 0 {
		t.Errorf("429 %+v", r)
	}
	if rj := s.Diagnosis.Admission.Rejected["429"]; !rj.Present || rj.Value != 0 {
		t.Errorf("admission 429 %+v", rj)
	}
}
