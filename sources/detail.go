package sources

import "time"

// DetailBackend is an optional Backend capability: everything kept about
// one worker, on demand, for the drill-down view. The UI checks for it
// with a type assertion; a backend without it still gets a drill-down
// built from the Snapshot alone (fewer histories, restarts from Events).
type DetailBackend interface {
	// Detail returns the history of one target over window ending at at
	// (the shown snapshot's Time, so a paused view stays consistent), or
	// nil when the target is unknown.
	Detail(targetID string, at time.Time, window time.Duration) *WorkerDetail
}

// WorkerDetail is the full history of one worker for the drill-down.
type WorkerDetail struct {
	TargetID string
	// Time is the end of the history; Step the time between points; Span
	// the time all points cover (at least the window).
	Time time.Time
	Step time.Duration
	Span time.Duration
	// History holds one point per Step, oldest first, NaN for gaps, for
	// every scalar signal the worker exposes: gauges as their value at the
	// point, counters as the per-second rate over the point.
	History map[Signal][]float64
	// P50 and P99 hold, per histogram signal, the quantiles of each
	// point's bucket deltas (in the signal's unit; NaN = no observations).
	P50, P99 map[Signal][]float64
	// HitHistory is the actual prefix-hit ratio per point (NaN = no
	// prompt tokens in it).
	HitHistory []float64
	// Restarts seen since pdtop started, oldest first.
	Restarts []Restart
	// Sources names the raw metric each signal came from.
	Sources map[Signal]string
}

// Restart is one restart of a target: when it was seen and why pdtop
// thinks it restarted ("counter went down (…)", "new scheduler pid 42",
// "start time changed (…)").
type Restart struct {
	Time   time.Time
	Reason string
}
