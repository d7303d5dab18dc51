package sim

import (
	"math"
	"time"
)

// prefillWorker is the scheduler of a PD prefill worker, in SGLang's order:
// a request waits in the bootstrap queue until its decode worker has
// preallocated KV for it, then in the waiting queue, then runs in a prefill
// batch that costs time only for its uncached tokens, then sits in the
// in-flight queue while its KV crosses the link to the decode worker.
type prefillWorker struct {
	cache    *radixCache
	bootQ    []*request
	waitQ    []*request
	batch    []*request
	batchEnd time.Duration
	inflight []*request
	clock    time.Duration // how far this worker has been simulated
}

// sendPrefill delivers the prefill leg of r to w at t.
func (f *Fleet) sendPrefill(r *request, w *worker, t time.Duration) {
	r.p, r.pState, r.bootReady = w, pBoot, 0
	w.p.bootQ = append(w.p.bootQ, r)
}

// runPrefill simulates prefill worker w over [t0, t1).
func (f *Fleet) runPrefill(w *worker, t0, t1 time.Duration) {
	p := w.p
	if !w.up(t0) {
		p.clock = max(p.clock, t1)
		return
	}
	c := max(p.clock, t0)
	for {
		if len(p.batch) > 0 || p.batchEnd > c {
			if p.batchEnd >= t1 {
				break
			}
			c = max(c, p.batchEnd)
			f.completeBatch(w, c)
		}
		f.promoteBootstrapped(p, c)
		if f.formBatch(w, c) {
			continue
		}
		next := time.Duration(math.MaxInt64)
		for _, r := range p.bootQ {
			if r.bootReady > c && r.bootReady < next {
				next = r.bootReady
			}
		}
		if next >= t1 {
			c = t1
			break
		}
		c = next
	}
	p.clock = c
}

// promoteBootstrapped moves requests whose handshake completed by c from
// the bootstrap queue to the waiting queue, keeping arrival order.
func (f *Fleet) promoteBootstrapped(p *prefillWorker, c time.Duration) {
	kept := p.bootQ[:0]
	for _, r := range p.bootQ {
		if r.bootReady > 0 && r.bootReady <= c {
			r.pState, r.waitSince = pWait, max(r.bootReady, r.sentAt)
			p.waitQ = append(p.waitQ, r)
			continue
		}
		kept = append(kept, r)
	}
	clear(p.bootQ[len(kept):])
	p.bootQ = kept
}

// formBatch starts a prefill batch at c from the head of the waiting queue
// (FCFS, up to the chunk size of uncached tokens). The prefix match happens
// here, against the worker's real cache.
func (f *Fleet) formBatch(w *worker, c time.Duration) bool {
	p, k := w.p, f.cfg.Capacity
	compute, hit := 0, 0
	for len(p.waitQ) > 0 {
		r := p.waitQ[0]
		if r.waitSince > c {
			break
		}
		cached := min(p.cache.match(r.segs), r.prompt-1)
		uncached := r.prompt - cached
		if len(p.batch) > 0 && compute+uncached > k.PrefillChunkTokens {
			break
		}
		leaf, evicted, ok := p.cache.acquire(r.segs)
		w.stats.evicted += float64(evicted)
		if !ok {
			break
		}
		p.waitQ = p.waitQ[1:]
		r.leaf, r.cached, r.pState = leaf, cached, pRun
		p.batch = append(p.batch, r)
		w.stats.queueTime.observe((c - r.waitSince).Seconds())
		compute += uncached
		hit += cached
	}
	if len(p.batch) == 0 {
		return false
	}
	dur := k.PrefillBatchOverhead + time.Duration(float64(compute)/k.PrefillTokensPerSec*float64(time.Second))
	p.batchEnd = c + dur
	w.stats.cacheHitRate = float64(hit) / float64(hit+compute)
	w.stats.rtPrefillCompute += float64(compute)
	w.stats.rtPrefillCache += float64(hit)
	return true
}

// completeBatch ends the running batch at c: the prompts become cached,
// the first token exists (TTFT on the prefill worker) and each KV transfer
// to its decode worker starts.
func (f *Fleet) completeBatch(w *worker, c time.Duration) {
	p := w.p
	batch := p.batch
	p.batch = nil
	for _, r := range batch {
		p.cache.markReady(r.leaf)
		r.prefilled, r.pState = c, pInflight
		p.inflight = append(p.inflight, r)
		w.stats.ttft.observe((c - r.sentAt).Seconds())
		f.startTransfer(r, c)
	}
}

// prefillDone finishes the prefill leg at t once its KV reached the decode
// worker: the request completes on the prefill worker (1 output token) and
// its prefix stays cached, unpinned.
func (f *Fleet) prefillDone(r *request, t time.Duration) {
	w := r.p
	p := w.p
	p.inflight = removeReq(p.inflight, r)
	p.cache.release(r.leaf)
	r.leaf, r.pState = nil, legDone
	s := w.stats
	s.requests++
	s.promptTokens += float64(r.prompt)
	s.genTokens++
	s.cachedTokens += float64(r.cached)
	s.e2e.observe((t - r.sentAt).Seconds())
	ms := float64(t-r.prefilled) / float64(time.Millisecond)
	bytes := float64(r.prompt) * f.cfg.Capacity.KVBytesPerToken
	s.kvLatency.observe(ms)
	s.kvMB.observe(bytes / 1e6)
	if ms > 0 {
		s.kvSpeed.observe(bytes / 1e9 / (ms / 1000))
	}
	r.gw.prefillLegDone(r, t)
}

// checkBootstrapTimeouts fails requests that waited too long for their
// decode worker to preallocate.
func (f *Fleet) checkBootstrapTimeouts(w *worker, t time.Duration) {
	limit := f.cfg.Capacity.BootstrapTimeout
	var expired []*request
	for _, r := range w.p.bootQ {
		if r.bootReady == 0 && t-r.sentAt >= limit {
			expired = append(expired, r)
		}
	}
	for _, r := range expired {
		for _, x := range []*worker{r.p, r.d} {
			x.stats.bootstrapFailed++
			x.stats.timeoutBootstrap++
		}
		r.gw.failAttempt(r, r.sentAt+limit, r.d)
	}
}

// tokens is what legacy /get_loads reports for a prefill worker: prompt
// tokens of the requests queued or running on it.
func (p *prefillWorker) tokens() int {
	n := 0
	for _, q := range [][]*request{p.bootQ, p.waitQ, p.batch} {
		for _, r := range q {
			n += r.prompt
		}
	}
	return n
}
