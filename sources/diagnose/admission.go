package diagnose

import (
	"math"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// noWorkerErrors are the gateway error types that mean "no worker could
// take the request" (smg no_workers; legacy no_available_workers and the
// PD server_selection failure).
var noWorkerErrors = []string{"no_workers", "no_available_workers", "server_selection"}

// admission sums the gateways' offered → admitted → completed figures and
// reads goodput from the latency histograms.
func admission(s *sources.Snapshot, th sources.Thresholds) sources.Admission {
	a := sources.Admission{Rejected: map[string]sources.Reading{}}
	add := func(dst *sources.Reading, r sources.Reading) {
		if !r.Present || !finite(r.Value) {
			return
		}
		dst.Present = true
		dst.Value += r.Value
		dst.Increase += r.Increase
		if dst.Source == "" {
			dst.Source = r.Source
		}
	}
	var answered sources.Reading // every response, whatever its class
	for i := range s.Gateways {
		g := &s.Gateways[i]
		a.Present = true
		add(&a.Offered, g.Readings.Get(sources.SigGWOffered))
		for _, r := range g.Responses {
			add(&answered, r)
		}
		add(&a.Retried, g.Readings.Get(sources.SigGWRetries))
		add(&a.RetriesExhausted, g.Readings.Get(sources.SigGWRetriesExhausted))
		for class, r := range g.Responses {
			if class != "429" && class != "408" {
				add(&a.Admitted, r)
			}
			switch class {
			case "2xx":
				add(&a.Completed, r)
			case "429", "408", "5xx":
				cur := a.Rejected[class]
				add(&cur, r)
				a.Rejected[class] = cur
			}
		}
		for typ, r := range g.Errors {
			for _, nw := range noWorkerErrors {
				if strings.EqualFold(typ, nw) {
					cur := a.Rejected["no workers"]
					add(&cur, r)
					a.Rejected["no workers"] = cur
				}
			}
		}
	}
	// One definition everywhere (the summary's Fleet.Rejected too).
	gws := make([]*sources.GatewayView, len(s.Gateways))
	for i := range s.Gateways {
		gws[i] = &s.Gateways[i]
	}
	a.RejectedShare = sources.RejectedShareOf(gws...)
	if a.Admitted.Present {
		a.Admitted.Source = "answers other than 429 and 408"
	}
	// Every request answered was offered: the request counter moves when
	// a request arrives and the response counters when it is answered, so
	// over a window of rising load (or with the counters' scrapes apart)
	// the answers can outnumber the arrivals. Offered is at least the
	// answers, so admitted never exceeds it.
	if answered.Present && (!a.Offered.Present || answered.Value > a.Offered.Value) {
		src := a.Offered.Source
		a.Offered = answered
		a.Offered.Source = "all answers (more than " + orText(src, "the request counter") + " counted in the window)"
	}
	if !a.Completed.Present {
		ws, pool := decodeSide(s)
		if len(ws) > 0 {
			a.Completed = pool.Readings.Get(sources.SigRequests)
		}
	}
	a.Goodput = goodput(s, th, a.Completed)
	return a
}

// latencyDist is the fleet's distribution of sig over the window: the
// decode pool's (where TTFT and ITL are seen last), else the unified or
// prefill pool's.
func latencyDist(s *sources.Snapshot, sig sources.Signal) (sources.Quantiles, string) {
	for _, p := range []*sources.PoolView{&s.Decode, &s.Unified, &s.Prefill} {
		if q, ok := p.Dists[sig]; ok && q.Present && len(q.Buckets) > 0 {
			return q, p.Role.String()
		}
	}
	return sources.Quantiles{}, ""
}

// goodput reads the share of completions meeting the TTFT and ITL SLOs
// from the pools' bucket deltas. Each share is bounded by the buckets
// either side of its threshold (Quantiles.ShareAtMost). TTFT is per
// request and ITL per token, from separate histograms, so the joint share
// is bounded by Fréchet's inequalities — max(0, a + b − 1) ≤ both ≤
// min(a, b) — with a·b (independence) as the point estimate.
func goodput(s *sources.Snapshot, th sources.Thresholds, completed sources.Reading) sources.Goodput {
	g := sources.Goodput{SLOTTFT: th.SLOTTFT, SLOITL: th.SLOITL}
	ttft, tp := latencyDist(s, sources.SigTTFT)
	itl, ip := latencyDist(s, sources.SigITL)
	g.TTFT = ttft.ShareAtMost(th.SLOTTFT)
	g.ITL = itl.ShareAtMost(th.SLOITL)
	if g.TTFT.Present {
		g.TTFTBucket = ttft.BucketAround(th.SLOTTFT)
	}
	if g.ITL.Present {
		g.ITLBucket = itl.BucketAround(th.SLOITL)
	}
	switch {
	case g.TTFT.Present && g.ITL.Present:
		a, b := g.TTFT, g.ITL
		lo := math.Max(0, a.Lo+b.Lo-1)
		hi := math.Min(a.Hi, b.Hi)
		est := math.Min(hi, math.Max(lo, a.Est*b.Est))
		g.Share = sources.Range{Present: true, Lo: lo, Est: est, Hi: hi}
		g.Method = "TTFT (" + tp + " pool, per request) and ITL (" + ip + " pool, per token) bucket deltas; joint share bounded, product as estimate"
	case g.TTFT.Present:
		g.Share = g.TTFT
		g.Method = "TTFT only (" + tp + " pool); no ITL histogram"
	case g.ITL.Present:
		g.Share = g.ITL
		g.Method = "ITL only (" + ip + " pool); no TTFT histogram"
	default:
		return g
	}
	g.Present = true
	if completed.Present {
		c := completed.Value
		g.Rate = sources.Range{Present: true, Lo: g.Share.Lo * c, Est: g.Share.Est * c, Hi: g.Share.Hi * c}
	}
	return g
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
