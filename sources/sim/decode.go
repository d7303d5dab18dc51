package sim

import (
	"math"
	"time"
)

// decodeLogInterval is SGLang's --decode-log-interval: decode gauges
// (gen_throughput, num_retracted_reqs) are refreshed every this many steps.
const decodeLogInterval = 40

// SGLang's new_token_ratio: the share of each request's remaining
// max_tokens the scheduler expects it to still generate. It starts
// conservative, decays every decode step while nothing goes wrong (so the
// worker admits more and more), and jumps back after a retraction.
const (
	newTokenRatioInit  = 0.7
	newTokenRatioMin   = 0.1
	newTokenRatioDecay = 0.001
)

// decodeWorker is the scheduler of a PD decode worker: a prealloc queue
// (waiting for KV room), a transfer queue (KV allocated, bytes in flight), a
// waiting queue (transferred, waiting for a batch slot), the running batch,
// and the requests it retracted when the pool ran out.
type decodeWorker struct {
	pool      int // KV pool in tokens
	kvUsed    int // allocated tokens
	preallocQ []*request
	transferQ []*request
	waitQ     []*request
	running   []*request
	retractQ  []*request
	ctxSum    int // context tokens of the running batch
	remaining int // Σ (max_tokens − generated) over requests holding KV
	ratio     float64
	clock     time.Duration

	logSteps  int
	logTokens int
	logStart  time.Duration
}

// sendDecode delivers the decode leg of r to w at t and preallocates at
// once when the pool has room.
func (f *Fleet) sendDecode(r *request, w *worker, t time.Duration) {
	r.d, r.dState, r.kvAlloc, r.generated = w, dPrealloc, 0, 0
	w.d.preallocQ = append(w.d.preallocQ, r)
	f.preallocate(w, t)
}

// allocatable is the KV the decode worker can promise a new request: free
// tokens minus what it expects the requests it holds to still generate.
func (d *decodeWorker) allocatable() int {
	return d.pool - d.kvUsed - int(d.ratio*float64(d.remaining))
}

// preallocate serves the retracted requests first, then the prealloc queue
// in order, while KV and batch slots allow. A preallocated request's
// prefill side learns about it after the bootstrap handshake.
func (f *Fleet) preallocate(w *worker, t time.Duration) {
	d, k := w.d, f.cfg.Capacity
	if !w.up(t) {
		return
	}
	for len(d.retractQ) > 0 {
		r := d.retractQ[0]
		ctx := r.prompt + r.generated
		if d.allocatable() < ctx {
			return
		}
		d.retractQ = d.retractQ[1:]
		r.kvAlloc = ctx
		d.kvUsed += ctx
		d.remaining += r.maxNew - r.generated
		// Retracted requests are recomputed on the decode worker.
		r.readyAt = t + time.Duration(float64(ctx)/k.PrefillTokensPerSec*float64(time.Second))
		r.dState = dWait
		d.waitQ = append(d.waitQ, r)
	}
	for len(d.preallocQ) > 0 {
		r := d.preallocQ[0]
		if d.allocatable() < r.prompt || len(d.transferQ)+len(d.waitQ) >= k.MaxRunningRequests {
			return
		}
		d.preallocQ = d.preallocQ[1:]
		r.kvAlloc = r.prompt
		d.kvUsed += r.prompt
		d.remaining += r.maxNew
		r.dState = dTransfer
		d.transferQ = append(d.transferQ, r)
		r.bootReady = max(t, r.sentAt) + k.BootstrapLatency
	}
}

// transferDone lands r's KV on its decode worker at t.
func (f *Fleet) transferDone(r *request, t time.Duration) {
	d := r.d.d
	d.transferQ = removeReq(d.transferQ, r)
	r.dState, r.readyAt = dWait, t
	d.waitQ = append(d.waitQ, r)
	f.prefillDone(r, t)
}

// stepTime is one decode step: a fixed cost plus a per-request and a
// per-context-token term, scaled so that a large batch at the reference
// context decodes DecodeTokensPerSec.
func (f *Fleet) stepTime(batch, ctx int) time.Duration {
	k := f.cfg.Capacity
	perReq := 0.5 / k.DecodeTokensPerSec
	perCtx := 0.5 / (k.DecodeTokensPerSec * float64(k.RefContextTokens))
	s := k.DecodeStepBase.Seconds() + float64(batch)*perReq + float64(ctx)*perCtx
	return time.Duration(s * float64(time.Second))
}

// runDecode simulates decode worker w over [t0, t1), step by step.
func (f *Fleet) runDecode(w *worker, t0, t1 time.Duration) {
	d := w.d
	if !w.up(t0) {
		d.clock = max(d.clock, t1)
		return
	}
	c := max(d.clock, t0)
	for c < t1 {
		f.admitRunning(w, c)
		if len(d.running) == 0 {
			next := time.Duration(math.MaxInt64)
			for _, r := range d.waitQ {
				next = min(next, r.readyAt)
			}
			if next <= c || next >= t1 {
				c = t1
				break
			}
			c = next
			continue
		}
		if d.pool-d.kvUsed < len(d.running) && !f.retract(w) {
			c = t1 // no room even for one request: stalled this tick
			break
		}
		c = f.decodeStep(w, c)
	}
	d.clock = c
}

// admitRunning moves transferred requests into the running batch.
func (f *Fleet) admitRunning(w *worker, c time.Duration) {
	d := w.d
	limit := f.cfg.Capacity.MaxRunningRequests
	for i := 0; i < len(d.waitQ) && len(d.running) < limit; {
		r := d.waitQ[i]
		if r.readyAt > c {
			i++
			continue
		}
		d.waitQ = append(d.waitQ[:i], d.waitQ[i+1:]...)
		r.dState = dRun
		d.running = append(d.running, r)
		d.ctxSum += r.prompt + r.generated
		w.stats.queueTime.observe((c - r.readyAt).Seconds())
	}
}

// decodeStep runs one step at c and returns its end: every running request
// gets one token; finished requests leave.
func (f *Fleet) decodeStep(w *worker, c time.Duration) time.Duration {
	d, s := w.d, w.stats
	b := len(d.running)
	step := f.stepTime(b, d.ctxSum)
	c += step
	firsts := 0
	kept := d.running[:0]
	var done []*request
	for _, r := range d.running {
		r.generated++
		r.kvAlloc++
		d.kvUsed++
		d.ctxSum++
		if r.generated == 1 {
			firsts++
			s.ttft.observe((c - r.sentAt).Seconds())
			r.gw.firstToken(r, c)
		}
		if r.generated >= r.output {
			done = append(done, r)
			continue
		}
		kept = append(kept, r)
	}
	clear(d.running[len(kept):])
	d.running = kept
	// Token-weighted ITL: each streamed token adds one count at the step
	// time and the step time to the sum (first tokens have no interval).
	n := b - firsts
	s.itl.observeN(step.Seconds(), uint64(n), step.Seconds()*float64(n))
	s.rtDecode += float64(b)
	d.remaining -= b
	d.ratio = max(newTokenRatioMin, d.ratio-newTokenRatioDecay)
	d.logSteps++
	d.logTokens += b
	if d.logSteps >= decodeLogInterval {
		s.genThroughput = float64(d.logTokens) / (c - d.logStart).Seconds()
		s.retractedGauge, s.retractedSinceLog = s.retractedSinceLog, 0
		d.logSteps, d.logTokens, d.logStart = 0, 0, c
	}
	for _, r := range done {
		f.decodeDone(w, r, c)
	}
	return c
}

// decodeDone completes r on its decode worker at t.
func (f *Fleet) decodeDone(w *worker, r *request, t time.Duration) {
	d, s := w.d, w.stats
	d.kvUsed -= r.kvAlloc
	d.ctxSum -= r.prompt + r.generated
	d.remaining -= r.maxNew - r.generated
	r.kvAlloc, r.dState = 0, legDone
	s.requests++
	s.promptTokens += float64(r.prompt)
	s.genTokens += float64(r.generated)
	s.e2e.observe((t - r.sentAt).Seconds())
	r.gw.decodeLegDone(r, t)
	f.preallocate(w, t)
}

// retractHeadroomSteps is SGLANG_RETRACT_DECODE_STEPS: a retraction frees
// enough KV for the remaining batch to run this many more steps.
const retractHeadroomSteps = 20

// retract frees KV when the next step cannot fit, as SGLang's
// retract_decode does: the requests with the least progress go back to a
// queue and are recomputed later. It reports whether a step can run.
func (f *Fleet) retract(w *worker) bool {
	d, s := w.d, w.stats
	for d.pool-d.kvUsed < retractHeadroomSteps*len(d.running) && len(d.running) > 1 {
		v := 0
		for i, r := range d.running {
			x := d.running[v]
			if r.generated < x.generated || (r.generated == x.generated && r.prompt > x.prompt) {
				v = i
			}
		}
		r := d.running[v]
		d.running = append(d.running[:v], d.running[v+1:]...)
		d.kvUsed -= r.kvAlloc
		d.ctxSum -= r.prompt + r.generated
		d.remaining -= r.maxNew - r.generated
		d.ratio = newTokenRatioInit
		r.kvAlloc, r.dState = 0, dRetracted
		d.retractQ = append(d.retractQ, r)
		s.retracted++
		s.retractedSinceLog++
	}
	return d.pool-d.kvUsed >= len(d.running)
}

// tokens is what legacy /get_loads reports for a decode worker.
func (d *decodeWorker) tokens() int { return d.kvUsed }
