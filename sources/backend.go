package sources

import (
	"context"
	"time"
)

// Job is one unit of refresh work: a scrape of one target, one batch of
// PromQL queries, one step of a replay. Key identifies it across rounds:
// a job whose previous run with the same Key is still going is skipped for
// that round, never queued.
type Job struct {
	Key string
	Run func(ctx context.Context)
}

// Backend is where the dashboard's data comes from: direct scraping
// (collect.Live), a recording (sources/replay) or a Prometheus-compatible
// server (sources/promql). The UI calls Round once per refresh interval,
// runs each job off the UI goroutine under a deadline, and asks for a
// Snapshot when a round completes or the next tick comes.
type Backend interface {
	// Round returns the jobs of one refresh round.
	Round() []Job
	// Busy records that the job with this key was still running at a tick.
	Busy(key string)
	// Now is the backend's clock: wall time when live, the recording's time
	// when replaying.
	Now() time.Time
	// Snapshot derives the fleet view at Now over window. Never nil.
	Snapshot(window time.Duration) *Snapshot
}

// Thresholds are the levels at which a figure is flagged on screen and
// listed in the summary line, and the SLO that defines goodput. Zero
// fields take the defaults of DefaultThresholds.
type Thresholds struct {
	// QueueDepth flags a worker whose waiting (or bootstrap / prealloc /
	// transfer) queue holds at least this many requests.
	QueueDepth float64 `yaml:"queue_depth" json:"queue_depth"`
	// KVUsage flags a worker whose KV usage ratio (0–1) is at least this.
	KVUsage float64 `yaml:"kv_usage" json:"kv_usage"`
	// TTFTP99 flags a p99 time to first token at least this long (seconds).
	TTFTP99 float64 `yaml:"ttft_p99_seconds" json:"ttft_p99_seconds"`
	// ITLP99 flags a p99 inter-token latency at least this long (seconds).
	ITLP99 float64 `yaml:"itl_p99_seconds" json:"itl_p99_seconds"`
	// HitGap flags a predicted − actual prefix-hit gap of at least this
	// (ratio 0–1, e.g. 0.2 = 20 points).
	HitGap float64 `yaml:"hit_gap" json:"hit_gap"`
	// ErrorRate flags a rejected/failed share of gateway responses of at
	// least this (ratio 0–1).
	ErrorRate float64 `yaml:"error_rate" json:"error_rate"`
	// SLOTTFT and SLOITL define goodput: a completion is good when its TTFT
	// and its ITL are within them (seconds).
	SLOTTFT float64 `yaml:"slo_ttft_seconds" json:"slo_ttft_seconds"`
	SLOITL  float64 `yaml:"slo_itl_seconds" json:"slo_itl_seconds"`
}

// DefaultThresholds are conservative on-call defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{
		QueueDepth: 10,
		KVUsage:    0.90,
		TTFTP99:    5,
		ITLP99:     0.1,
		HitGap:     0.2,
		ErrorRate:  0.05,
		SLOTTFT:    2,
		SLOITL:     0.05,
	}
}

// WithDefaults returns t with every zero field set to its default.
func (t Thresholds) WithDefaults() Thresholds {
	d := DefaultThresholds()
	set := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	set(&t.QueueDepth, d.QueueDepth)
	set(&t.KVUsage, d.KVUsage)
	set(&t.TTFTP99, d.TTFTP99)
	set(&t.ITLP99, d.ITLP99)
	set(&t.HitGap, d.HitGap)
	set(&t.ErrorRate, d.ErrorRate)
	set(&t.SLOTTFT, d.SLOTTFT)
	set(&t.SLOITL, d.SLOITL)
	return t
}
