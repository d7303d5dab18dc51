package diagnose

import (
	"math"
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// minBusy is the fewest saturated history steps that measure a worker's
// sustained rate.
const minBusy = 3

// capacity fills the three accounts — prefill, decode, transfer — and the
// cold starts.
//
// The sustained-rate estimator: a worker's history has one point per
// chart step (its rate over at least five scrape intervals). A step is
// saturated when the worker had work waiting at both its ends (prefill:
// the waiting queue; decode: the prealloc queue, i.e. requests that found
// no KV room, or a full running batch), so what it did in that step is
// what it can do. The worker's sustained rate is the median of its
// saturated steps (at least minBusy of them); the pool's per-worker rate
// is the median over measured workers, and its capacity the sum of the
// measured workers' rates plus that median for each worker up but not
// measured. A pool never saturated in the span has only a lower bound:
// the sum of each worker's peak step.
func capacity(s *sources.Snapshot) sources.Capacity {
	c := sources.Capacity{TargetUtil: TargetUtil}
	offered := s.Diagnosis.Admission.Offered
	pws, ppool := prefillSide(s)
	c.Prefill = poolLoad(s, sources.RolePrefill, pws, ppool, offered)
	dws, dpool := decodeSide(s)
	c.Decode = poolLoad(s, sources.RoleDecode, dws, dpool, offered)
	c.Transfer = transfer(s, pws)
	c.ColdStarts = coldStarts(s)
	return c
}

// work is what one pool's accounts count.
type work struct {
	unit string
	// served is the pool's work rate over the window; perReq its work
	// per finished request, totalPerReq (prefill) prompt tokens per request.
	served              sources.Reading
	perReq, totalPerReq float64
	// series is a worker's work per history step; busy whether step j was
	// saturated.
	series func(w *sources.WorkerView) []float64
	busy   func(w *sources.WorkerView, j int) bool
}

func prefillWork(pool *sources.PoolView) work {
	r := pool.Readings
	wk := work{unit: "uncached tok/s"}
	prompt, cached := r.Get(sources.SigPromptTokens), r.Get(sources.SigCachedTokens)
	if comp := r.Get(sources.SigRealtimePrefillCompute); comp.Present {
		wk.served = comp
	} else if prompt.Present {
		wk.served = sources.Reading{Present: true, Value: math.Max(0, prompt.Value-cached.Value),
			Increase: math.Max(0, prompt.Increase-cached.Increase), Source: "prompt − cached tokens"}
	}
	if req := r.Get(sources.SigRequests); req.Present && req.Increase > 0 {
		wk.perReq = wk.served.Increase / req.Increase
		wk.totalPerReq = prompt.Increase / req.Increase
	}
	wk.series = uncachedSeries
	wk.busy = func(w *sources.WorkerView, j int) bool {
		q := w.History[sources.SigWaiting]
		return at(q, j) >= 1 && at(q, j-1) >= 1
	}
	return wk
}

func decodeWork(pool *sources.PoolView) work {
	r := pool.Readings
	// Served is the pool's output tokens/s as every panel shows it
	// (PoolView.Output); the work per request is output tokens per
	// finished request.
	wk := work{unit: "output tok/s", served: pool.Output}
	gen := r.Get(sources.SigGenerationTokens)
	if req := r.Get(sources.SigRequests); req.Present && req.Increase > 0 && gen.Present {
		wk.perReq = gen.Increase / req.Increase
	}
	wk.series = outputSeries
	wk.busy = func(w *sources.WorkerView, j int) bool {
		q := w.History[sources.SigPreallocQueue]
		if at(q, j) >= 1 && at(q, j-1) >= 1 {
			return true
		}
		limit := w.Readings.Get(sources.SigMaxRunningRequests)
		return limit.Present && limit.Value > 0 && at(w.History[sources.SigRunning], j) >= limit.Value
	}
	return wk
}

// uncachedSeries is a prefill worker's uncached prompt tokens/s per step:
// the scheduler's prefill-compute counter, else prompt − cached tokens,
// else prompt tokens × (1 − hit).
func uncachedSeries(w *sources.WorkerView) []float64 {
	if c, ok := w.History[sources.SigRealtimePrefillCompute]; ok {
		return c
	}
	p := w.History[sources.SigPromptTokens]
	out := make([]float64, len(p))
	cached, haveCached := w.History[sources.SigCachedTokens]
	for j, v := range p {
		switch c := at(cached, j); {
		case haveCached && finite(c):
			out[j] = math.Max(0, v-c)
		case haveCached && finite(v):
			out[j] = v // no cached tokens in the step
		default:
			out[j] = v * (1 - at(w.HitHistory, j))
		}
	}
	return out
}

// outputSeries is a decode worker's output tokens/s per step.
func outputSeries(w *sources.WorkerView) []float64 {
	if d, ok := w.History[sources.SigRealtimeDecode]; ok {
		return d
	}
	return w.History[sources.SigGenerationTokens]
}

// poolLoad measures one pool.
func poolLoad(s *sources.Snapshot, role sources.Role, ws []*sources.WorkerView, pool *sources.PoolView, offered sources.Reading) sources.PoolLoad {
	var wk work
	if role == sources.RolePrefill {
		wk = prefillWork(pool)
	} else {
		wk = decodeWork(pool)
	}
	p := sources.PoolLoad{Role: role, Unit: wk.unit, Served: wk.served}
	if len(ws) == 0 || !wk.served.Present {
		return p
	}
	p.Present = true
	if role == sources.RoleDecode {
		p.ITL, _ = latencyDist(s, sources.SigITL)
	}
	// Offered work: offered requests × work per request.
	switch {
	case offered.Present && wk.perReq > 0:
		p.Offered = sources.Reading{Present: true, Value: offered.Value * wk.perReq,
			Source: "gateway offered req/s × " + Num(wk.perReq) + " " + unitTokens(wk.unit) + " per finished request"}
		if wk.totalPerReq > 0 {
			p.OfferedTotal = sources.Reading{Present: true, Value: offered.Value * wk.totalPerReq,
				Source: "gateway offered req/s × " + Num(wk.totalPerReq) + " prompt tokens per finished request"}
		}
	default:
		p.Offered = wk.served
		p.Note = "no gateway offered count: offered = served"
		if role == sources.RolePrefill {
			if pr := pool.Readings.Get(sources.SigPromptTokens); pr.Present {
				p.OfferedTotal = pr
			}
		}
	}
	// Sustained rate per worker.
	var rates []float64
	measured := map[string]float64{}
	peaks := 0.0
	samples := 0
	for _, w := range ws {
		series := wk.series(w)
		var busy []float64
		peak := math.NaN()
		for j, v := range series {
			if !finite(v) {
				continue
			}
			if !(peak >= v) {
				peak = v
			}
			if wk.busy(w, j) {
				busy = append(busy, v)
			}
		}
		if len(busy) >= minBusy {
			r := median(busy)
			measured[w.ID] = r
			rates = append(rates, r)
			samples += len(busy)
		}
		if finite(peak) && w.Health != sources.Down {
			peaks += peak
		}
	}
	up := 0
	for _, w := range ws {
		if w.Health == sources.Up || w.Health == sources.Stale {
			up++
		}
	}
	p.Workers = up
	if len(rates) > 0 {
		per := median(append([]float64(nil), rates...))
		total := 0.0
		for _, w := range ws {
			if w.Health != sources.Up && w.Health != sources.Stale {
				continue
			}
			if r, ok := measured[w.ID]; ok {
				total += r
			} else {
				total += per
			}
		}
		p.PerWorker = sources.Reading{Present: true, Value: per}
		p.Capacity = sources.Reading{Present: true, Value: total}
		p.Method = "median of " + strconv.Itoa(samples) + " saturated steps on " + strconv.Itoa(len(rates)) + " of " +
			strconv.Itoa(len(ws)) + " workers (" + saturatedBy(role) + ")"
	} else if peaks > 0 {
		p.LowerBound = true
		// Never saturated: the pool absorbed all it was given, so it can
		// do at least what it served and what was offered (the sum of
		// per-step peaks can read below both early on, which claimed a
		// calm pool "over capacity").
		low := peaks
		for _, r := range []sources.Reading{p.Served, p.Offered} {
			if r.Present && finite(r.Value) && r.Value > low {
				low = r.Value
			}
		}
		p.Capacity = sources.Reading{Present: true, Value: low}
		if up > 0 {
			p.PerWorker = sources.Reading{Present: true, Value: low / float64(up)}
		}
		p.Method = "never saturated in the span (" + saturatedBy(role) + "): capacity is at least the sum of each worker's peak step, and at least what it served and was offered"
	}
	if p.Capacity.Present && p.Capacity.Value > 0 && p.Offered.Present {
		p.Utilisation = sources.Reading{Present: true, Value: p.Offered.Value / p.Capacity.Value}
		p.Headroom = sources.Reading{Present: true, Value: p.Capacity.Value - p.Offered.Value}
		if p.PerWorker.Present && p.PerWorker.Value > 0 {
			p.WorkersNeeded = max(1, int(math.Ceil(p.Offered.Value/(p.PerWorker.Value*TargetUtil))))
		}
	}
	return p
}

func saturatedBy(role sources.Role) string {
	if role == sources.RolePrefill {
		return "waiting queue non-empty"
	}
	return "prealloc queue non-empty or running batch full"
}

func unitTokens(unit string) string {
	if unit == "uncached tok/s" {
		return "uncached tokens"
	}
	return "output tokens"
}

// transfer is the KV-transfer account per prefill worker: bytes/s sent
// (Δsum of the transfer-size histogram over the window) against the speed
// one transfer achieved (Σ bytes ÷ Σ transfer time, from the size and
// latency histograms; else the median per-transfer speed). Rate ÷ that
// speed is the mean number of transfers in flight (Little's law); below
// 1 it is also the share of time a transfer is in flight, and from 1 up
// transfers overlap, queue behind each other, and the path has no
// headroom.
func transfer(s *sources.Snapshot, ws []*sources.WorkerView) sources.TransferLoad {
	var t sources.TransferLoad
	best := -1.0
	for _, w := range ws {
		l, ok := link(w)
		if !ok {
			continue
		}
		t.Present = true
		t.Links = append(t.Links, l)
		if l.Rate.Present {
			t.Rate.Present = true
			t.Rate.Value += l.Rate.Value
		}
		if l.InFlight.Present && l.InFlight.Value > best {
			best = l.InFlight.Value
			t.Busiest = sources.Reading{Present: true, Value: l.Busy.Value, Source: l.Name}
		}
	}
	return t
}

func link(w *sources.WorkerView) (sources.LinkLoad, bool) {
	l := sources.LinkLoad{Name: w.Name}
	size, lat, speed := w.Dist(sources.SigKVXferSize), w.Dist(sources.SigKVXferLatency), w.Dist(sources.SigKVXferSpeed)
	// Seconds the window's counters cover, from the prompt-token reading.
	dt := 0.0
	if r := w.Readings.Get(sources.SigPromptTokens); r.Present && r.Value > 0 {
		dt = r.Increase / r.Value
	}
	var bytes float64
	switch {
	case size.Present && size.Unit == "MB" && size.Form == "histogram" && finite(size.Mean) && dt > 0:
		bytes = size.Mean * size.Count * 1e6
		l.Rate = sources.Reading{Present: true, Value: bytes / dt, Source: "Δsum of " + size.Source}
	case size.Present && size.Unit == "MB" && finite(size.Mean):
		if req := w.Readings.Get(sources.SigRequests); req.Present {
			l.Rate = sources.Reading{Present: true, Value: size.Mean * 1e6 * req.Value,
				Source: size.Source + " × finished requests/s"}
		}
	}
	switch {
	case bytes > 0 && lat.Present && lat.Unit == "ms" && lat.Form == "histogram" && lat.Count > 0 && finite(lat.Mean) && lat.Mean > 0:
		l.Bandwidth = sources.Reading{Present: true, Value: bytes / (lat.Mean * lat.Count / 1000),
			Source: "Σ bytes ÷ Σ transfer time"}
	case speed.Present && speed.Unit == "GB/s":
		v := speed.P50
		if !finite(v) {
			v = speed.Mean
		}
		if finite(v) && v > 0 {
			l.Bandwidth = sources.Reading{Present: true, Value: v * 1e9, Source: "median " + speed.Source}
		}
	}
	if !l.Rate.Present && !l.Bandwidth.Present {
		return l, false
	}
	if l.Rate.Present && l.Bandwidth.Present && l.Bandwidth.Value > 0 {
		n := l.Rate.Value / l.Bandwidth.Value
		l.InFlight = sources.Reading{Present: true, Value: n, Source: "bytes/s ÷ per-transfer speed (Little's law)"}
		l.Queued = n >= 1
		l.Busy = sources.Reading{Present: true, Value: math.Min(1, n)}
		l.Headroom = sources.Reading{Present: true, Value: math.Max(0, l.Bandwidth.Value-l.Rate.Value)}
		if l.Queued {
			l.Headroom.Value = 0
		}
	}
	return l, true
}
