package sim

import (
	"container/heap"
	"time"
)

// path is one prefill→decode KV-transfer route. Transfers on a path are
// serialised (a FIFO queue): each starts when the path is free.
type path struct {
	busyUntil time.Duration
}

func pathKey(p, d int) uint64 { return uint64(p)<<32 | uint64(d) }

// startTransfer sends r's KV from its prefill to its decode worker at t.
// Bytes follow the prompt length (the decode side needs the whole
// prompt's KV, cached prefix included). A transfer that would finish later
// than TransferTimeout fails at the timeout, having used the path only
// until then.
func (f *Fleet) startTransfer(r *request, t time.Duration) {
	k := f.cfg.Capacity
	key := pathKey(r.p.id, r.d.id)
	pa := f.paths[key]
	if pa == nil {
		pa = &path{}
		f.paths[key] = pa
	}
	bw := k.LinkGBps * 1e9 * f.cond.linkFactor(r.p.id, r.d.id)
	bytes := float64(r.prompt) * k.KVBytesPerToken
	wire := time.Duration(bytes / bw * float64(time.Second))
	start := max(t, pa.busyUntil)
	end := start + wire + k.LinkLatency
	if end-t <= k.TransferTimeout {
		pa.busyUntil = start + wire
		f.schedule(end, evTransferDone, r)
		return
	}
	deadline := t + k.TransferTimeout
	pa.busyUntil = max(pa.busyUntil, min(start+wire, deadline))
	f.schedule(deadline, evTransferFail, r)
}

// transferFailed is a KV transfer timeout: both sides count it, the
// gateway sees the prefill leg fail.
func (f *Fleet) transferFailed(r *request, t time.Duration) {
	for _, w := range []*worker{r.p, r.d} {
		w.stats.transferFailed++
		w.stats.timeoutTransfer++
	}
	r.gw.failAttempt(r, t, r.p)
}

// Event queue: everything that happens at a precise simulated time
// between worker passes.

type evKind uint8

const (
	evArrival evKind = iota
	evRetry
	evTransferDone
	evTransferFail
)

type event struct {
	t    time.Duration
	seq  uint64
	kind evKind
	r    *request
	gen  uint32
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (f *Fleet) schedule(t time.Duration, kind evKind, r *request) {
	f.seq++
	e := event{t: t, seq: f.seq, kind: kind, r: r}
	if r != nil {
		e.gen = r.gen
	}
	heap.Push(&f.events, e)
}

// drainEvents handles every queued event before t1, in time order.
func (f *Fleet) drainEvents(t1 time.Duration) {
	for len(f.events) > 0 && f.events[0].t < t1 {
		e := heap.Pop(&f.events).(event)
		if e.r != nil && e.r.gen != e.gen {
			continue // the attempt it belonged to already ended
		}
		switch e.kind {
		case evArrival:
			f.arrive(e.t)
		case evRetry:
			e.r.gw.dispatch(e.r, e.t)
		case evTransferDone:
			f.transferDone(e.r, e.t)
		case evTransferFail:
			f.transferFailed(e.r, e.t)
		}
	}
}
