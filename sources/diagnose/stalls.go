package diagnose

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Stall kinds.
const (
	StallTransfer       = "transfer stall"
	StallDecodeCollapse = "decode collapse"
)

// stallAfter is how long work must sit without progress to be a stall
// (and at least minStallSteps history steps).
const (
	stallAfter    = 10 * time.Second
	minStallSteps = 3
)

// stalls finds, on workers that are up and that no gateway replica marks
// unhealthy or circuit-open:
//
//   - a transfer stall: requests in the transfer-side queues (prefill:
//     in-flight; decode: prealloc and transfer) at every step of the last
//     stallAfter, while no KV transfer completed (the transfer-latency
//     histogram's count did not move; finished requests where that
//     histogram is not exposed);
//   - a decode collapse: output tokens/s at zero at every step of the
//     last stallAfter while requests were running or queued.
func stalls(s *sources.Snapshot, th sources.Thresholds) []sources.Stall {
	st := step(s)
	if st <= 0 {
		return nil
	}
	need := max(minStallSteps, int(math.Ceil(float64(stallAfter)/float64(st))))
	var out []sources.Stall
	for i := range s.Workers {
		w := &s.Workers[i]
		if w.Health != sources.Up || healthRed(w) {
			continue
		}
		if q := transferQueues(w); len(q) > 0 {
			progress := transferProgress(s, w)
			queued := waitingTransfers(w, q, th)
			run := trailing(len(progress), func(j int) (bool, bool) {
				p, n := at(progress, j), queued(j)
				if !finite(p) || !finite(n) {
					return false, false
				}
				return n >= 1 && p == 0, true
			})
			if run >= need {
				out = append(out, stall(s, w, StallTransfer, run, st, queued(len(progress)-1),
					queueNames(q)+" held with no KV transfer completing"))
			}
		}
		if w.Role == sources.RoleDecode || w.Role == sources.RoleUnified {
			output := outputSeries(w)
			work := sumAt(w, []sources.Signal{sources.SigRunning, sources.SigWaiting,
				sources.SigPreallocQueue, sources.SigTransferQueue})
			run := trailing(len(output), func(j int) (bool, bool) {
				o, n := at(output, j), work(j)
				if !finite(o) || !finite(n) {
					return false, false
				}
				return n >= 1 && o == 0, true
			})
			if run >= need {
				out = append(out, stall(s, w, StallDecodeCollapse, run, st, work(len(output)-1),
					"no output tokens while requests are running or queued"))
			}
		}
	}
	return out
}

func stall(s *sources.Snapshot, w *sources.WorkerView, kind string, run int, st time.Duration, queued float64, why string) sources.Stall {
	d := time.Duration(run) * st
	detail := Num(queued) + " req waiting; " + why
	if len(w.Router) > 0 {
		detail += "; health checks green on " + itoa(len(w.Router)) + " replica"
		if len(w.Router) > 1 {
			detail += "s"
		}
	} else {
		detail += "; scrapes healthy"
	}
	return sources.Stall{Kind: kind, ID: w.ID, Name: w.Name, Role: w.Role,
		Since: s.Time.Add(-d), For: d, Queued: queued, Detail: detail}
}

// transferProgress is the KV transfers completing per step that w's
// queued transfers wait on: its own transfer-latency histogram's count
// when it counts anything in the span (SGLang observes transfers on the
// prefill side), else the prefill pool's, else w's finished requests.
func transferProgress(s *sources.Snapshot, w *sources.WorkerView) []float64 {
	if own, ok := w.History[sources.SigKVXferLatency]; ok && anyPositive(own) {
		return own
	}
	if w.Role == sources.RoleDecode {
		var pool []float64
		for i := range s.Workers {
			p := &s.Workers[i]
			if p.Role != sources.RolePrefill {
				continue
			}
			if h, ok := p.History[sources.SigKVXferLatency]; ok {
				if pool == nil {
					pool = make([]float64, len(h))
					for j := range pool {
						pool[j] = math.NaN()
					}
				}
				for j := range pool {
					if v := at(h, j); finite(v) {
						if !finite(pool[j]) {
							pool[j] = 0
						}
						pool[j] += v
					}
				}
			}
		}
		if pool != nil {
			return pool
		}
	}
	if own, ok := w.History[sources.SigKVXferLatency]; ok {
		return own
	}
	return w.History[sources.SigRequests]
}

// waitingTransfers is, per step, the requests waiting on a transfer: the
// prefill in-flight queue and the decode transfer queue, plus the decode
// prealloc queue at steps where KV usage was below the threshold (with
// the pool full, prealloc waits for room, which is decode saturation, not
// a stalled transfer).
func waitingTransfers(w *sources.WorkerView, q []sources.Signal, th sources.Thresholds) func(j int) float64 {
	var always []sources.Signal
	for _, sig := range q {
		if sig != sources.SigPreallocQueue {
			always = append(always, sig)
		}
	}
	base := sumAt(w, always)
	kv := w.History[sources.SigKVUsage]
	pre, hasPre := w.History[sources.SigPreallocQueue]
	return func(j int) float64 {
		n := base(j)
		if hasPre {
			if p, u := at(pre, j), at(kv, j); finite(p) && finite(u) && u < th.KVUsage {
				if !finite(n) {
					n = 0
				}
				n += p
			}
		}
		return n
	}
}

func anyPositive(v []float64) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// healthRed reports whether any gateway replica marks w unhealthy or its
// circuit open.
func healthRed(w *sources.WorkerView) bool {
	for _, r := range w.Router {
		if r.Health.Present && r.Health.Value == 0 || r.CB.Present && r.CB.Value == 1 {
			return true
		}
	}
	return false
}

// transferQueues are the queues a worker's transfers wait in.
func transferQueues(w *sources.WorkerView) []sources.Signal {
	var out []sources.Signal
	for _, sig := range []sources.Signal{sources.SigInflightQueue, sources.SigPreallocQueue, sources.SigTransferQueue} {
		if _, ok := w.History[sig]; ok {
			out = append(out, sig)
		}
	}
	return out
}

func queueNames(q []sources.Signal) string {
	names := make([]string, len(q))
	for i, sig := range q {
		names[i] = sig.String()
	}
	return strings.Join(names, " + ")
}

// sumAt returns the sum of w's history of sigs at step j (NaN when none
// has a point there).
func sumAt(w *sources.WorkerView, sigs []sources.Signal) func(j int) float64 {
	return func(j int) float64 {
		sum, any := 0.0, false
		for _, sig := range sigs {
			if v := at(w.History[sig], j); finite(v) {
				sum += v
				any = true
			}
		}
		if !any {
			return math.NaN()
		}
		return sum
	}
}

// trailing counts the steps, newest first, for which cond holds; steps
// with no data at the end (known false) are skipped, a step with no data
// after the run began ends it.
func trailing(n int, cond func(j int) (holds, known bool)) int {
	run := 0
	for j := n - 1; j >= 0; j-- {
		holds, known := cond(j)
		if !known {
			if run == 0 {
				continue
			}
			break
		}
		if !holds {
			break
		}
		run++
	}
	return run
}

func itoa(n int) string { return strconv.Itoa(n) }
