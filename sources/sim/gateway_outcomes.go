package sim

import (
	"math"
	"slices"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// How an attempt ends, as a gateway replica sees it: legs completing,
// failures and retries, responses, and the circuit breaker they feed.

func (g *replica) releaseLoads(r *request) {
	if r.pLoad {
		g.views[r.p.id].load--
		r.pLoad = false
	}
	if r.dLoad {
		g.views[r.d.id].load--
		r.dLoad = false
	}
}

// failAttempt ends the current attempt at t because culprit failed, and
// retries with backoff (a new prefill/decode pair) unless the stream had
// already started or the retries are exhausted.
func (g *replica) failAttempt(r *request, t time.Duration, culprit *worker) {
	f := g.f
	leg := 0
	if culprit.role == sources.RoleDecode {
		leg = 1
	}
	f.cancelLegs(r, t)
	g.releaseLoads(r)
	if v := g.view(culprit); v != nil {
		g.outcome(v, false, t)
		v.legErr++
		v.g3Failed++
	}
	switch {
	case r.headers:
		g.finish(r, t, 0) // the stream broke after its 200: nothing to retry
	case r.attempt <= f.cfg.Router.MaxRetries:
		g.st.retries[leg]++
		f.schedule(t+g.backoff(r.attempt), evRetry, r)
	default:
		g.st.exhausted[leg]++
		g.st.errBackend++
		g.finish(r, t, 503)
	}
}

func (g *replica) backoff(attempt int) time.Duration {
	b := float64(g.f.cfg.Router.RetryBackoff) * math.Pow(1.5, float64(attempt-1))
	b *= 0.8 + 0.4*g.rng.Float64()
	return min(time.Duration(b), 5*time.Second)
}

// finish ends an admitted request without success; code 0 means the
// client already got its response headers.
func (g *replica) finish(r *request, t time.Duration, code int) {
	if code != 0 {
		g.respond(code, t-r.arrival)
	}
	g.inflight--
	g.f.wl.done(r.conv, 0, false)
	g.admitNext(t)
}

// respond counts a response and the time to its headers.
func (g *replica) respond(code int, d time.Duration) {
	i := slices.IndexFunc(g.st.responses, func(c codeCount) bool { return c.code == code })
	if i < 0 {
		g.st.responses = append(g.st.responses, codeCount{code: code})
		slices.SortFunc(g.st.responses, func(a, b codeCount) int { return a.code - b.code })
		i = slices.IndexFunc(g.st.responses, func(c codeCount) bool { return c.code == code })
	}
	g.st.responses[i].n++
	g.st.httpDur.observe(d.Seconds())
}

// firstToken: the decode worker streamed its first token, so the client
// has its 200 and headers.
func (g *replica) firstToken(r *request, t time.Duration) {
	if r.headers {
		return
	}
	r.headers = true
	d := (t - r.arrival).Seconds()
	g.respond(200, t-r.arrival)
	g.st.pdRequests++
	g.st.pdDur.observe(d)
	g.st.g3TTFT.observe(d)
}

func (g *replica) prefillLegDone(r *request, t time.Duration) {
	v := g.views[r.p.id]
	if r.pLoad {
		v.load--
		r.pLoad = false
	}
	g.outcome(v, true, t)
	v.legOK++
	v.g3OK++
}

func (g *replica) decodeLegDone(r *request, t time.Duration) {
	v := g.views[r.d.id]
	if r.dLoad {
		v.load--
		r.dLoad = false
	}
	g.outcome(v, true, t)
	v.legOK++
	v.g3OK++
	d := (t - r.arrival).Seconds()
	g.st.routerDur.observe(d)
	g.st.g3Dur.observe(d)
	g.inflight--
	g.f.wl.done(r.conv, r.generated, true)
	g.admitNext(t)
}

// outcome feeds one request outcome on a worker into the replica's
// circuit breaker for it.
func (g *replica) outcome(v *workerView, ok bool, t time.Duration) {
	rt := g.f.cfg.Router
	if ok {
		v.success++
		v.cbFail = 0
		v.cbOK++ // the current streak, as smg_worker_cb_consecutive_successes shows it
		if v.cb == cbHalfOpen && v.cbOK >= rt.CBSuccesses {
			g.transition(v, cbClosed, t)
		}
		return
	}
	v.fail++
	v.cbOK = 0
	v.cbFail++
	if v.cb == cbHalfOpen || (v.cb == cbClosed && v.cbFail >= rt.CBFailures) {
		g.transition(v, cbOpen, t)
	}
}

func (g *replica) transition(v *workerView, to int, t time.Duration) {
	v.cbTrans[v.cb][to]++
	v.cb = to
	v.cbFail, v.cbOK = 0, 0
	if to == cbOpen {
		v.cbOpenedAt = t
	}
}
