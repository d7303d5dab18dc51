package store

import (
	"sort"
	"time"
)

// frame is one ingested scrape of one target: the value of every column
// at receive time t. Counter-like columns hold reset-corrected cumulative
// values, gauge columns the raw value; NaN means absent in that scrape.
type frame struct {
	t time.Time
	v []float64
}

// ring is a fixed-capacity FIFO of frames, oldest first.
type ring struct {
	buf   []frame
	start int
	n     int
}

func newRing(capacity int) ring {
	if capacity < 2 {
		capacity = 2
	}
	return ring{buf: make([]frame, capacity)}
}

func (r *ring) len() int { return r.n }

// at returns the i-th frame, 0 = oldest.
func (r *ring) at(i int) *frame { return &r.buf[(r.start+i)%len(r.buf)] }

// push appends f; when full it evicts and returns the oldest frame.
func (r *ring) push(f frame) (evicted frame, ok bool) {
	if r.n == len(r.buf) {
		evicted = r.buf[r.start]
		r.buf[r.start] = f
		r.start = (r.start + 1) % len(r.buf)
		return evicted, true
	}
	r.buf[(r.start+r.n)%len(r.buf)] = f
	r.n++
	return frame{}, false
}

// history keeps every frame for a recent span (fine) and thinned frames
// (one per coarse step) for the rest of the longest window, so that 15
// minutes of history for hundreds of workers stays within a memory budget.
type history struct {
	fine       ring
	coarse     ring
	coarseStep time.Duration
}

func newHistory(fineCap, coarseCap int, coarseStep time.Duration) history {
	return history{fine: newRing(fineCap), coarse: newRing(coarseCap), coarseStep: coarseStep}
}

func (h *history) len() int { return h.coarse.len() + h.fine.len() }

// at returns frame i in time order across both tiers, 0 = oldest.
func (h *history) at(i int) *frame {
	if c := h.coarse.len(); i < c {
		return h.coarse.at(i)
	} else {
		return h.fine.at(i - c)
	}
}

func (h *history) latest() *frame {
	if h.len() == 0 {
		return nil
	}
	return h.at(h.len() - 1)
}

func (h *history) push(f frame) {
	ev, ok := h.fine.push(f)
	if !ok {
		return
	}
	if c := h.coarse.len(); c > 0 && ev.t.Sub(h.coarse.at(c-1).t) < h.coarseStep {
		return // thinned
	}
	h.coarse.push(ev)
}

// firstAtOrAfter returns the index of the oldest frame with time ≥ t, or
// len() when none.
func (h *history) firstAtOrAfter(t time.Time) int {
	return sort.Search(h.len(), func(i int) bool { return !h.at(i).t.Before(t) })
}

// lastAtOrBefore returns the index of the newest frame with time ≤ t, or -1.
func (h *history) lastAtOrBefore(t time.Time) int {
	return sort.Search(h.len(), func(i int) bool { return h.at(i).t.After(t) }) - 1
}
