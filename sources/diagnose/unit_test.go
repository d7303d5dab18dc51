package diagnose_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/diagnose"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

// TestFrozenWorkersStall serves real worker expositions that never change
// (a prefill worker with 8 requests in its in-flight transfer queue, a
// decode worker with 58 running and 2 in its transfer queue) through the
// real scrape path: nothing completes while every scrape succeeds, so the
// prefill worker has a transfer stall and the decode worker both a
// transfer stall and a decode collapse, named in the findings.
func TestFrozenWorkersStall(t *testing.T) {
	var targets []sources.Target
	for _, f := range []struct {
		file string
		role sources.Role
		name string
	}{{"worker_2026_prefill.prom", sources.RolePrefill, "prefill-a"}, {"worker_2026_decode.prom", sources.RoleDecode, "decode-a"}} {
		body, err := os.ReadFile("../schema/testdata/" + f.file)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(body)
		}))
		t.Cleanup(srv.Close)
		targets = append(targets, sources.Target{ID: srv.URL + "/metrics", URL: srv.URL + "/metrics", Name: f.name, Role: f.role})
	}
	now := start
	st := store.New(store.Options{Interval: time.Second})
	st.SetTargets(now, targets)
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sc := collect.New(client, collect.Options{Clock: func() time.Time { return now }})
	snapAt := func(seconds int) *sources.Snapshot {
		for i := 0; i < seconds; i++ {
			now = now.Add(time.Second)
			for _, tg := range targets {
				st.Ingest(sc.Scrape(context.Background(), tg))
			}
		}
		return st.Snapshot(now, time.Minute)
	}
	if s := snapAt(6); len(s.Diagnosis.Stalls) != 0 {
		t.Fatalf("a stall after 6s: %+v", s.Diagnosis.Stalls)
	}
	s := snapAt(30)
	kinds := map[string]bool{}
	for _, x := range s.Diagnosis.Stalls {
		kinds[x.Name+" "+x.Kind] = true
		if x.For < 10*time.Second || x.Queued < 1 || !strings.Contains(x.Detail, "scrapes healthy") {
			t.Errorf("stall %+v", x)
		}
	}
	for _, want := range []string{"prefill-a transfer stall", "decode-a transfer stall", "decode-a decode collapse"} {
		if !kinds[want] {
			t.Errorf("missing %q in %+v", want, s.Diagnosis.Stalls)
		}
	}
	if len(s.Diagnosis.Findings) == 0 || s.Diagnosis.Findings[0].Severity != sources.SevCrit {
		t.Errorf("stalls should lead the findings: %+v", s.Diagnosis.Findings)
	}
}

// synthetic builds a snapshot with one gateway predicting 80 % (blocks)
// and prefill workers with the given actual hits over 100 requests each.
func synthetic(hits ...float64) *sources.Snapshot {
	s := &sources.Snapshot{Time: start, Window: time.Minute, ChartSpan: 5 * time.Minute, Interval: time.Second}
	s.Gateways = []sources.GatewayView{{TargetStatus: sources.TargetStatus{ID: "g", Name: "gw", Role: sources.RoleGateway, Health: sources.Up},
		Readings:  sources.Readings{sources.SigGWOffered: {Present: true, Value: 5, Increase: 300}},
		Predicted: sources.HitRatio{Present: true, Ratio: 0.8, Hit: 800, Total: 1000, Unit: "blocks"}}}
	var h, tot float64
	for i, r := range hits {
		w := sources.WorkerView{TargetStatus: sources.TargetStatus{ID: string(rune('a' + i)), Name: "p" + string(rune('0'+i)),
			Role: sources.RolePrefill, Health: sources.Up},
			Readings: sources.Readings{sources.SigRequests: {Present: true, Value: 2, Increase: 100},
				sources.SigPromptTokens: {Present: true, Value: 1000, Increase: 60000}},
			Hit: sources.HitRatio{Present: true, Ratio: r, Hit: r * 60000, Total: 60000, Unit: "tokens"}}
		s.Workers = append(s.Workers, w)
		h += r * 60000
		tot += 60000
	}
	s.Prefill = sources.PoolView{Role: sources.RolePrefill, Workers: len(hits), Up: len(hits),
		Hit: sources.HitRatio{Present: true, Ratio: h / tot, Hit: h, Total: tot, Unit: "tokens"}}
	return s
}

// TestUnexplainedGap: a large gap with no restart, eviction, disagreement
// or spill in the evidence says so.
func TestUnexplainedGap(t *testing.T) {
	s := synthetic(0.75, 0.3)
	diagnose.Run(s)
	v := verdictOf(t, s, "p1")
	if !v.Large || len(v.Causes) != 1 || v.Causes[0].Kind != sources.CauseUnexplained || !strings.Contains(v.Verdict, "gap 50 pts") {
		t.Fatalf("p1: %+v", v)
	}
	if w := verdictOf(t, s, "p0"); w.Large || len(w.Causes) != 0 {
		t.Errorf("p0 is within the threshold: %+v", w)
	}
}

// TestNoCacheData: a worker that serves requests but exposes no
// prompt/cached-token counters is named, not shown as 0 %.
func TestNoCacheData(t *testing.T) {
	s := synthetic(0.75, 0.7)
	w := &s.Workers[1]
	w.Hit = sources.HitRatio{}
	delete(w.Readings, sources.SigPromptTokens)
	w.Readings[sources.SigRequests] = sources.Reading{Present: true, Value: 2, Increase: 100, Source: "sglang:num_requests_total"}
	diagnose.Run(s)
	v := verdictOf(t, s, "p1")
	if v.GapKnown || len(v.Causes) == 0 || v.Causes[0].Kind != sources.CauseNoCacheData || !strings.HasPrefix(v.Verdict, "no cache data") {
		t.Fatalf("p1: %+v", v)
	}
	// A worker with no request counter either has simply had no traffic.
	delete(w.Readings, sources.SigRequests)
	diagnose.Run(s)
	if v := verdictOf(t, s, "p1"); len(v.Causes) == 0 || v.Causes[0].Kind != sources.CauseLowTraffic {
		t.Fatalf("idle worker: %+v", v)
	}
}

// TestShareAtMost checks the bounds of a share read from buckets: the
// interpolation error is the bucket the threshold falls in.
func TestShareAtMost(t *testing.T) {
	q := sources.Quantiles{Present: true, Count: 100, Buckets: []sources.Bucket{
		{UpperBound: 0.1, Count: 50}, {UpperBound: 0.5, Count: 90}, {UpperBound: 1, Count: 95}, {UpperBound: math.Inf(1), Count: 100}}}
	for _, c := range []struct {
		x           float64
		lo, est, hi float64
	}{
		{0.1, 0.5, 0.5, 0.5},
		{0.3, 0.5, 0.7, 0.9},
		{0.05, 0, 0.25, 0.5},
		{2, 0.95, 0.95, 1},
	} {
		r := q.ShareAtMost(c.x)
		if !r.Present || math.Abs(r.Lo-c.lo) > 1e-9 || math.Abs(r.Est-c.est) > 1e-9 || math.Abs(r.Hi-c.hi) > 1e-9 {
			t.Errorf("ShareAtMost(%v) = %+v, want %v %v %v", c.x, r, c.lo, c.est, c.hi)
		}
	}
	if r := (sources.Quantiles{Present: true, Form: "summary", Count: 5}).ShareAtMost(1); r.Present {
		t.Errorf("a summary has no buckets: %+v", r)
	}
}

// TestGoodputBounds: with 90 % of requests under the TTFT SLO and 80 % of
// tokens under the ITL SLO, the joint share lies in [70 %, 80 %], 72 % if
// independent.
func TestGoodputBounds(t *testing.T) {
	s := synthetic(0.7)
	s.Thresholds = sources.Thresholds{SLOTTFT: 1, SLOITL: 0.05}
	bk := func(under float64) sources.Quantiles {
		return sources.Quantiles{Present: true, Count: 100, Form: "histogram", Buckets: []sources.Bucket{
			{UpperBound: 0.05, Count: under * 100}, {UpperBound: 1, Count: under * 100}, {UpperBound: math.Inf(1), Count: 100}}}
	}
	ttft := bk(0.9)
	itl := bk(0.8)
	s.Decode = sources.PoolView{Role: sources.RoleDecode, Dists: map[sources.Signal]sources.Quantiles{sources.SigTTFT: ttft, sources.SigITL: itl}}
	s.Gateways[0].Responses = map[string]sources.Reading{"2xx": {Present: true, Value: 10, Increase: 600}}
	diagnose.Run(s)
	g := s.Diagnosis.Admission.Goodput
	if !g.Present || math.Abs(g.Share.Lo-0.7) > 1e-9 || math.Abs(g.Share.Hi-0.8) > 1e-9 || math.Abs(g.Share.Est-0.72) > 1e-9 {
		t.Fatalf("goodput %+v", g)
	}
	if math.Abs(g.Rate.Est-7.2) > 1e-9 {
		t.Errorf("goodput rate %+v, want 7.2 req/s", g.Rate)
	}
}
