// Package snapjson turns a sources.Snapshot into the JSON document that
// `pdtop snapshot --format json` prints. The document follows
// docs/snapshot.schema.json (JSON Schema 2020-12); every number carries its
// unit in its name or in a "unit" field, and a figure that is not known is
// null or left out — never 0.
//
// Units: rates are per second ("tokens/s", "req/s"); counter increases
// over the window are in the signal's unit ("tokens", "req"); ratios are
// 0–1; durations are seconds unless a distribution's "unit" says "ms";
// KV-transfer speed is GB/s and size MB, as the engine reports them.
package snapjson

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// SchemaVersion is the document's "schema_version"; it changes when a
// field changes meaning or is removed (adding fields does not change it).
const SchemaVersion = 1

// Document is the whole snapshot.
type Document struct {
	SchemaVersion   int        `json:"schema_version"`
	GeneratedBy     string     `json:"generated_by"`
	Time            time.Time  `json:"time"`
	WindowSeconds   float64    `json:"window_seconds"`
	IntervalSeconds float64    `json:"interval_seconds"`
	Thresholds      Thresholds `json:"thresholds"`
	Fleet           Fleet      `json:"fleet"`
	Crossings       []Crossing `json:"crossings"`
	Pools           Pools      `json:"pools"`
	Workers         []Worker   `json:"workers"`
	Gateways        []Gateway  `json:"gateways"`
	Targets         []Target   `json:"targets"`
	Events          []Event    `json:"events"`
	Diagnosis       Diagnosis  `json:"diagnosis"`
}

// Thresholds in force, with their units in the names.
type Thresholds struct {
	QueueDepthRequests float64 `json:"queue_depth_requests"`
	KVUsageRatio       float64 `json:"kv_usage_ratio"`
	TTFTP99Seconds     float64 `json:"ttft_p99_seconds"`
	ITLP99Seconds      float64 `json:"itl_p99_seconds"`
	HitGapRatio        float64 `json:"hit_gap_ratio"`
	ErrorRateRatio     float64 `json:"error_rate_ratio"`
	SLOTTFTSeconds     float64 `json:"slo_ttft_seconds"`
	SLOITLSeconds      float64 `json:"slo_itl_seconds"`
}

// Fleet is the summary line's figures.
type Fleet struct {
	Targets               int      `json:"targets"`
	TargetsUp             int      `json:"targets_up"`
	RequestsPerSecond     *float64 `json:"requests_per_second"`
	InputTokensPerSecond  *float64 `json:"input_tokens_per_second"`
	OutputTokensPerSecond *float64 `json:"output_tokens_per_second"`
	// OutputTokensSource names the counter behind OutputTokensPerSecond
	// (sources.WorkerView.Output): per-batch decode tokens when exposed,
	// else finished requests' output tokens.
	OutputTokensSource string    `json:"output_tokens_source,omitempty"`
	PrefixHit          *HitRatio `json:"prefix_hit"`
	RejectedRatio      *float64  `json:"rejected_ratio"`
}

// Crossing is a figure at or over its threshold.
type Crossing struct {
	Target    string  `json:"target"`
	Name      string  `json:"name"`
	Role      string  `json:"role"`
	What      string  `json:"what"`
	Signal    *string `json:"signal"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Unit      string  `json:"unit"`
	// BeyondTopBucket: value is a p99 above the top finite bucket bound
	// (a lower bound).
	BeyondTopBucket bool `json:"beyond_top_bucket,omitempty"`
}

// Reading is one scalar figure: a gauge's latest value, or a counter's
// per-second rate over the window (Unit ends in "/s") with its Increase
// over the window in the base unit.
type Reading struct {
	Value    *float64 `json:"value"`
	Unit     string   `json:"unit"`
	Kind     string   `json:"kind"`
	Increase *float64 `json:"increase,omitempty"`
	Source   string   `json:"source,omitempty"`
}

// Distribution is a histogram's quantiles over the window (null p50/p90/
// p99 when only a mean is known: form "summary" or "gauge").
type Distribution struct {
	P50    *float64 `json:"p50"`
	P90    *float64 `json:"p90"`
	P99    *float64 `json:"p99"`
	Mean   *float64 `json:"mean"`
	Count  float64  `json:"count"`
	Unit   string   `json:"unit"`
	Form   string   `json:"form"`
	Source string   `json:"source,omitempty"`
	// BeyondTopBucket says, for the histogram form, which quantiles fell
	// in the +Inf bucket: those hold the highest finite bound and the
	// true value lies above it.
	BeyondTopBucket *Beyond `json:"beyond_top_bucket,omitempty"`
}

// Beyond flags each quantile that lies above the top finite bucket.
type Beyond struct {
	P50 bool `json:"p50"`
	P90 bool `json:"p90"`
	P99 bool `json:"p99"`
}

// HitRatio is a prefix-hit ratio of sums over the window, or, with
// Since set, over the time since a restart inside the window (the new
// process alone; Ratio is null under sources.MinTokensSinceRestart
// prompt tokens).
type HitRatio struct {
	Ratio  *float64   `json:"ratio"`
	Hit    float64    `json:"hit"`
	Total  float64    `json:"total"`
	Unit   string     `json:"unit"`
	Source string     `json:"source,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
}

// Target is one scraped endpoint's health.
type Target struct {
	ID                    string     `json:"id"`
	Name                  string     `json:"name"`
	Role                  string     `json:"role"`
	Origin                string     `json:"origin"`
	Health                string     `json:"health"`
	AgeSeconds            *float64   `json:"age_seconds"`
	LastSuccess           *time.Time `json:"last_success"`
	LastError             *Error     `json:"last_error"`
	ScrapeDurationSeconds float64    `json:"scrape_duration_seconds"`
	BytesWire             int64      `json:"bytes_wire"`
	BytesBody             int64      `json:"bytes_body"`
	Series                int        `json:"series"`
	Restarts              int        `json:"restarts"`
	LastRestart           *time.Time `json:"last_restart"`
	Engine                string     `json:"engine"`
	Generation            string     `json:"generation"`
	// Via is "" when the figures come from scraping the target itself,
	// else where they were read instead (a gateway's /engine_metrics).
	Via string `json:"via"`
}

// Error is a classified scrape failure.
type Error struct {
	Class      string `json:"class"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"http_status,omitempty"`
}

// Worker is one engine worker.
type Worker struct {
	Target
	RestartedInWindow bool `json:"restarted_in_window"`
	// ReplicasDisagree is "" when the gateway replicas reporting on this
	// worker agree, else how they differ.
	ReplicasDisagree string                  `json:"replicas_disagree"`
	Readings         map[string]Reading      `json:"readings"`
	Distributions    map[string]Distribution `json:"distributions"`
	PrefixHit        *HitRatio               `json:"prefix_hit"`
	// OutputTokens is output tokens/s as the panels count them
	// (sources.WorkerView.Output); Source says which counter.
	OutputTokens *Reading     `json:"output_tokens_per_second,omitempty"`
	Router       []RouterView `json:"router"`
}

// RouterView is one gateway replica's view of a worker.
type RouterView struct {
	Replica                 string   `json:"replica"`
	InFlightRequests        *float64 `json:"in_flight_requests"`
	PicksPerSecond          *float64 `json:"picks_per_second"`
	Healthy                 *bool    `json:"healthy"`
	Circuit                 *string  `json:"circuit"`
	KVTreeBlocks            *float64 `json:"kv_tree_blocks"`
	EngineHitLastBatchRatio *float64 `json:"engine_hit_last_batch_ratio"`
}

// Gateway is one gateway replica.
type Gateway struct {
	Target
	Readings           map[string]Reading      `json:"readings"`
	ResponsesPerSecond map[string]*float64     `json:"responses_per_second"`
	ErrorsPerSecond    map[string]*float64     `json:"errors_per_second"`
	RejectedRatio      *float64                `json:"rejected_ratio"`
	PredictedHit       *HitRatio               `json:"predicted_hit"`
	CeilingHit         *HitRatio               `json:"ceiling_hit"`
	Distributions      map[string]Distribution `json:"distributions"`
	Workers            []string                `json:"workers"`
}

// Pools are the role aggregates (only roles that have workers).
type Pools struct {
	Prefill *Pool `json:"prefill,omitempty"`
	Decode  *Pool `json:"decode,omitempty"`
	Unified *Pool `json:"unified,omitempty"`
}

// Pool aggregates one role's workers: gauges and rates summed, KV usage
// the max, distributions merged bucket by bucket.
type Pool struct {
	Workers       int                     `json:"workers"`
	Up            int                     `json:"up"`
	Readings      map[string]Reading      `json:"readings"`
	Distributions map[string]Distribution `json:"distributions"`
	PrefixHit     *HitRatio               `json:"prefix_hit"`
	// OutputTokens is the sum of the workers' output_tokens_per_second.
	OutputTokens *Reading `json:"output_tokens_per_second,omitempty"`
}

// Event is something that happened to a target.
type Event struct {
	Time   time.Time `json:"time"`
	Target string    `json:"target"`
	Name   string    `json:"name"`
	Kind   string    `json:"kind"`
	Detail string    `json:"detail,omitempty"`
	// Initial marks a "joined" of pdtop's initial discovery: the worker
	// was already there, not a cold start.
	Initial bool `json:"initial,omitempty"`
}

// Key is a signal's JSON key: its display name in snake case
// ("KV usage" → "kv_usage", "in-flight (transfer) queue" →
// "in_flight_transfer_queue").
func Key(sig sources.Signal) string {
	var b strings.Builder
	us := false
	for _, r := range strings.ToLower(sig.String()) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			us = false
		} else if !us && b.Len() > 0 {
			b.WriteByte('_')
			us = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// Marshal encodes s as an indented JSON document.
func Marshal(s *sources.Snapshot) ([]byte, error) {
	return json.MarshalIndent(New(s), "", "  ")
}

// New builds the document for s.
func New(s *sources.Snapshot) *Document {
	th := s.Thresholds.WithDefaults()
	d := &Document{
		SchemaVersion: SchemaVersion, GeneratedBy: "pdtop", Time: s.Time.UTC(),
		WindowSeconds: s.Window.Seconds(), IntervalSeconds: s.Interval.Seconds(),
		Thresholds: Thresholds{QueueDepthRequests: th.QueueDepth, KVUsageRatio: th.KVUsage,
			TTFTP99Seconds: th.TTFTP99, ITLP99Seconds: th.ITLP99, HitGapRatio: th.HitGap,
			ErrorRateRatio: th.ErrorRate, SLOTTFTSeconds: th.SLOTTFT, SLOITLSeconds: th.SLOITL},
		Fleet: Fleet{Targets: s.Fleet.Targets, TargetsUp: s.Fleet.TargetsUp,
			RequestsPerSecond: value(s.Fleet.ReqRate), InputTokensPerSecond: value(s.Fleet.InputRate),
			OutputTokensPerSecond: value(s.Fleet.OutputRate), PrefixHit: hit(s.Fleet.Hit),
			OutputTokensSource: s.Fleet.OutputRate.Source, RejectedRatio: value(s.Fleet.Rejected)},
		Crossings: []Crossing{}, Workers: []Worker{}, Gateways: []Gateway{}, Targets: []Target{}, Events: []Event{},
	}
	for _, c := range s.Crossings() {
		x := Crossing{Target: c.TargetID, Name: c.Name, Role: c.Role.String(), What: c.What,
			Value: c.Value, Threshold: c.Threshold, Unit: c.Unit, BeyondTopBucket: c.Beyond}
		if c.Signal != sources.SigInvalid {
			k := Key(c.Signal)
			x.Signal = &k
		}
		d.Crossings = append(d.Crossings, x)
	}
	d.Pools.Prefill, d.Pools.Decode, d.Pools.Unified = pool(&s.Prefill), pool(&s.Decode), pool(&s.Unified)
	for i := range s.Targets {
		d.Targets = append(d.Targets, target(&s.Targets[i], s.Time))
	}
	for i := range s.Workers {
		w := &s.Workers[i]
		out := Worker{Target: target(&w.TargetStatus, s.Time), RestartedInWindow: w.Restarted, ReplicasDisagree: w.Disagree,
			Readings: readings(w.Readings), Distributions: dists(w.Dists), PrefixHit: hit(w.Hit),
			OutputTokens: output(w.Output), Router: []RouterView{}}
		for _, r := range w.Router {
			out.Router = append(out.Router, router(r))
		}
		d.Workers = append(d.Workers, out)
	}
	for i := range s.Gateways {
		g := &s.Gateways[i]
		out := Gateway{Target: target(&g.TargetStatus, s.Time), Readings: readings(g.Readings),
			ResponsesPerSecond: keyed(g.Responses), ErrorsPerSecond: keyed(g.Errors),
			PredictedHit: hit(g.Predicted), CeilingHit: hit(g.Ceiling), Distributions: dists(g.Dists),
			Workers: append([]string{}, g.Workers...)}
		if r, ok := g.RejectedShare(); ok {
			out.RejectedRatio = &r
		}
		d.Gateways = append(d.Gateways, out)
	}
	for _, e := range s.Events {
		d.Events = append(d.Events, Event{Time: e.Time.UTC(), Target: e.TargetID, Name: e.Name, Kind: e.Kind, Detail: e.Detail,
			Initial: e.Initial})
	}
	d.Diagnosis = diagnosis(s)
	return d
}

// num is v, or nil when it is not finite.
func num(v float64) *float64 {
	if !sources.Finite(v) {
		return nil
	}
	return &v
}

func value(r sources.Reading) *float64 {
	if !r.Present {
		return nil
	}
	return num(r.Value)
}

func hit(h sources.HitRatio) *HitRatio {
	if !h.Present && h.Source == "" {
		return nil
	}
	out := &HitRatio{Hit: finite(h.Hit), Total: finite(h.Total), Unit: h.Unit, Source: h.Source}
	if !h.Since.IsZero() {
		t := h.Since.UTC()
		out.Since = &t
	}
	if h.Present && h.Total > 0 {
		out.Ratio = num(h.Ratio)
	}
	return out
}

func finite(v float64) float64 {
	if !sources.Finite(v) {
		return 0
	}
	return v
}

func readings(rs sources.Readings) map[string]Reading {
	out := map[string]Reading{}
	sigs := make([]sources.Signal, 0, len(rs))
	for sig := range rs {
		sigs = append(sigs, sig)
	}
	sort.Slice(sigs, func(i, j int) bool { return sigs[i] < sigs[j] })
	for _, sig := range sigs {
		r := rs[sig]
		info := sig.Info()
		x := Reading{Value: value(r), Unit: info.Unit, Kind: "gauge", Source: r.Source}
		if info.Kind == sources.Counter {
			x.Kind, x.Unit = "counter", info.Unit+"/s"
			if r.Present {
				x.Increase = num(r.Increase)
			}
		}
		out[Key(sig)] = x
	}
	return out
}

func dists(ds map[sources.Signal]sources.Quantiles) map[string]Distribution {
	out := map[string]Distribution{}
	for sig, q := range ds {
		if !q.Present {
			continue
		}
		d := Distribution{P50: num(q.P50), P90: num(q.P90), P99: num(q.P99), Mean: num(q.Mean),
			Count: finite(q.Count), Unit: q.Unit, Form: q.Form, Source: q.Source}
		if q.Form == "histogram" {
			d.BeyondTopBucket = &Beyond{P50: q.P50Beyond, P90: q.P90Beyond, P99: q.P99Beyond}
		}
		out[Key(sig)] = d
	}
	return out
}

func keyed(m map[string]sources.Reading) map[string]*float64 {
	out := map[string]*float64{}
	for k, r := range m {
		out[k] = value(r)
	}
	return out
}

func router(r sources.RouterView) RouterView {
	out := RouterView{Replica: r.Replica, InFlightRequests: value(r.InFlight), PicksPerSecond: value(r.Picks),
		KVTreeBlocks: value(r.KVBlocks), EngineHitLastBatchRatio: value(r.EngineHit)}
	if r.Health.Present {
		h := r.Health.Value != 0
		out.Healthy = &h
	}
	if r.CB.Present {
		c := map[float64]string{0: "closed", 1: "open", 2: "half-open"}[r.CB.Value]
		if c == "" {
			c = "unknown"
		}
		out.Circuit = &c
	}
	return out
}

func pool(p *sources.PoolView) *Pool {
	if p.Workers == 0 {
		return nil
	}
	return &Pool{Workers: p.Workers, Up: p.Up, Readings: readings(p.Readings), Distributions: dists(p.Dists),
		PrefixHit: hit(p.Hit), OutputTokens: output(p.Output)}
}

// output is an output tokens/s reading (nil when no worker exposes one).
func output(r sources.Reading) *Reading {
	if !r.Present && r.Source == "" {
		return nil
	}
	x := &Reading{Value: value(r), Unit: "tokens/s", Kind: "counter", Source: r.Source}
	if r.Present {
		x.Increase = num(r.Increase)
	}
	return x
}

func target(t *sources.TargetStatus, now time.Time) Target {
	out := Target{ID: t.ID, Name: t.Name, Role: t.Role.String(), Origin: string(t.Origin), Health: t.Health.String(),
		ScrapeDurationSeconds: t.Duration.Seconds(), BytesWire: t.BytesWire, BytesBody: t.BytesBody,
		Series: t.Series, Restarts: t.Restarts, Engine: t.Engine, Generation: t.Generation, Via: t.Via}
	if !t.LastSuccess.IsZero() {
		ls := t.LastSuccess.UTC()
		out.LastSuccess = &ls
		out.AgeSeconds = num(t.Age.Seconds())
	}
	if !t.LastRestart.IsZero() {
		lr := t.LastRestart.UTC()
		out.LastRestart = &lr
	}
	if e := t.LastError; e != nil {
		out.LastError = &Error{Class: string(e.Class), Message: e.Message, HTTPStatus: e.Status}
	}
	return out
}
