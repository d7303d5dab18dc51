package sim

import (
	"net/http"
	"slices"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/prometheus/client_golang/prometheus"
)

// request is one client request, across its attempts. Both PD legs (the
// prefill and the decode half) live here.
type request struct {
	id     uint64
	conv   *conversation
	segs   []segment
	prompt int
	output int // tokens it will generate
	maxNew int // max_tokens: what the decode scheduler must plan for

	arrival  time.Duration // at the gateway
	queuedAt time.Duration // entered the admission queue
	gw       *replica
	attempt  int    // attempts dispatched so far
	gen      uint32 // bumped when an attempt ends; stale events compare it
	headers  bool   // the client got its response headers (first token)

	// Current attempt.
	p, d           *worker
	sentAt         time.Duration
	pState, dState legState
	pLoad, dLoad   bool // the replica counts this leg as in flight

	// Prefill leg.
	bootReady time.Duration // decode preallocated (+ handshake); 0 = not yet
	waitSince time.Duration
	cached    int
	leaf      *radixNode
	prefilled time.Duration

	// Decode leg.
	kvAlloc   int
	generated int
	readyAt   time.Duration
}

type legState uint8

const (
	legNone legState = iota
	pBoot
	pWait
	pRun
	pInflight
	dPrealloc
	dTransfer
	dWait
	dRun
	dRetracted
	legDone
)

// workerStats are one worker incarnation's counters and histograms; a
// restart replaces them (counters start from zero, as with SGLang's
// per-launch multiprocess directory).
type workerStats struct {
	// Tokenizer side (recorded when a request finishes).
	promptTokens, genTokens, cachedTokens, requests, aborted float64
	ttft, e2e, itl                                           hist
	// Scheduler side.
	rtPrefillCompute, rtPrefillCache, rtDecode float64
	retracted, transferFailed, bootstrapFailed float64
	timeoutBootstrap, timeoutTransfer, evicted float64
	queueTime, kvLatency, kvSpeed, kvMB        hist
	// Gauges SGLang sets only at log points (sticky in between).
	cacheHitRate, genThroughput, retractedSinceLog float64
	retractedGauge                                 float64
}

func newWorkerStats() *workerStats {
	return &workerStats{
		ttft: newHist(ttftBuckets), e2e: newHist(e2eBuckets), itl: newHist(itlBuckets),
		queueTime: newHist(queueTimeBuckets), kvLatency: newHist(kvLatencyBuckets),
		kvSpeed: newHist(kvSpeedBuckets), kvMB: newHist(kvMBBuckets),
	}
}

// worker is one SGLang worker process (prefill or decode).
type worker struct {
	f       *Fleet
	id      int
	name    string
	role    sources.Role
	pid     int
	readyAt time.Duration // refuses connections before this (warm-up)
	killed  bool          // unreachable (Kill) or gone (removed and drained)
	removed bool          // left the fleet; gateways deregistered it
	goneAt  time.Duration // removed workers close their endpoint then

	stats   *workerStats
	reg     *prometheus.Registry
	handler http.Handler
	url     string // base URL once served
	ep      *endpoint

	p *prefillWorker
	d *decodeWorker
}

// up reports whether the process answers at t.
func (w *worker) up(t time.Duration) bool { return !w.killed && t >= w.readyAt }

// engineType is the engine_type label value SGLang ≥ PR #18552 reports
// ("prefill" or "decode").
func (w *worker) engineType() string { return w.role.String() }

// baseURL is the worker label value gateways use.
func (w *worker) baseURL() string {
	if w.url != "" {
		return w.url
	}
	return "http://" + w.name
}

// incarnate starts a fresh process: empty caches and queues, counters from
// zero, a new pid and a new registry, answering after warmup.
func (w *worker) incarnate(t, warmup time.Duration) {
	k := w.f.cfg.Capacity
	w.pid = w.f.nextPID()
	w.readyAt = t + warmup
	w.stats = newWorkerStats()
	if w.role == sources.RolePrefill {
		w.p = &prefillWorker{cache: newRadixCache(k.PrefillKVTokens), clock: t}
	} else {
		w.d = &decodeWorker{pool: k.DecodeKVTokens, clock: t, logStart: t, ratio: newTokenRatioInit}
	}
	w.reg = prometheus.NewRegistry()
	w.reg.MustRegister(&workerCollector{w: w, stats: w.stats})
	w.handler = metricsHandler(w.reg)
}

// legs returns every request this worker currently holds, in a fixed
// order.
func (w *worker) legs() []*request {
	var rs []*request
	if p := w.p; p != nil {
		rs = slices.Concat(p.bootQ, p.waitQ, p.batch, p.inflight)
	}
	if d := w.d; d != nil {
		rs = slices.Concat(d.preallocQ, d.transferQ, d.waitQ, d.running, d.retractQ)
	}
	return rs
}

// removeReq deletes r from a queue, keeping the order.
func removeReq(q []*request, r *request) []*request {
	if i := slices.Index(q, r); i >= 0 {
		return slices.Delete(q, i, i+1)
	}
	return q
}

// cancelLegs aborts both legs of r's current attempt on the workers,
// releasing everything they hold.
func (f *Fleet) cancelLegs(r *request, t time.Duration) {
	if p := r.p; p != nil && r.pState != legNone && r.pState != legDone {
		pw := p.p
		switch r.pState {
		case pBoot:
			pw.bootQ = removeReq(pw.bootQ, r)
		case pWait:
			pw.waitQ = removeReq(pw.waitQ, r)
		case pRun:
			pw.batch = removeReq(pw.batch, r)
		case pInflight:
			pw.inflight = removeReq(pw.inflight, r)
		}
		if r.leaf != nil {
			pw.cache.release(r.leaf)
			r.leaf = nil
		}
		if p.up(t) {
			p.stats.aborted++
		}
	}
	if d := r.d; d != nil && r.dState != legNone && r.dState != legDone {
		dw := d.d
		switch r.dState {
		case dPrealloc:
			dw.preallocQ = removeReq(dw.preallocQ, r)
		case dTransfer:
			dw.transferQ = removeReq(dw.transferQ, r)
			dw.remaining -= r.maxNew - r.generated
		case dWait:
			dw.waitQ = removeReq(dw.waitQ, r)
			dw.remaining -= r.maxNew - r.generated
		case dRun:
			dw.running = removeReq(dw.running, r)
			dw.ctxSum -= r.prompt + r.generated
			dw.remaining -= r.maxNew - r.generated
		case dRetracted:
			dw.retractQ = removeReq(dw.retractQ, r)
		}
		dw.kvUsed -= r.kvAlloc
		r.kvAlloc = 0
		if d.up(t) {
			d.stats.aborted++
		}
	}
	r.pState, r.dState = legNone, legNone
	r.gen++
}
