// Package diagnose turns a snapshot's figures into conclusions: where a
// slow answer's fix goes. It reads only the *sources.Snapshot (figures over
// the window, per-step histories, events, thresholds) and writes
// Snapshot.Diagnosis, so every backend — direct scraping, a replay, a
// Prometheus server — reaches the same conclusions from the same data.
//
//   - Hit verdicts (hits.go): for each gateway replica and each
//     prefill-side worker, the expected prefix hit (the router's
//     prediction, or the worker's pool peers where no generation exposes
//     one) against the actual hit, both ratios of sums over the window,
//     and — when the gap reaches Thresholds.HitGap — the likely cause in
//     words: a recent restart, KV pressure, disagreeing replicas, spill
//     for load, no cache data, too little traffic, or "unexplained".
//   - Capacity (capacity.go): offered work against each pool's measured
//     sustained rate, in units of work (uncached prompt tokens/s for
//     prefill, output tokens/s for decode, KV bytes/s for transfer), with
//     cold starts (coldstart.go) against the steady state.
//   - Admission (admission.go): offered → admitted → completed → goodput,
//     goodput read from TTFT and ITL histogram buckets with stated bounds.
//   - Stalls (stalls.go): transfer stalls and decode collapses.
//
// Everything here is a pure function of the snapshot: no clock, no I/O.
package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// TargetUtil is the utilisation the capacity view sizes pools for.
const TargetUtil = 0.8

// Run derives s.Diagnosis from s. s.Thresholds must be set (zero fields
// take their defaults). Run never panics on missing data: absent figures
// give absent conclusions.
func Run(s *sources.Snapshot) {
	if s == nil {
		return
	}
	th := s.Thresholds.WithDefaults()
	d := &s.Diagnosis
	*d = sources.Diagnosis{}
	d.Hits = hitVerdicts(s, th)
	d.Admission = admission(s, th)
	d.Capacity = capacity(s)
	d.Stalls = stalls(s, th)
	explainBursts(s)
	d.Findings = findings(s, th)
}

// findings lists the conclusions worth a line in the summary, most
// severe first.
func findings(s *sources.Snapshot, th sources.Thresholds) []sources.Finding {
	d := &s.Diagnosis
	var out []sources.Finding
	for _, st := range d.Stalls {
		kind := "transfer-stall"
		if st.Kind == StallDecodeCollapse {
			kind = "decode-collapse"
		}
		out = append(out, sources.Finding{Severity: sources.SevCrit, Kind: kind, Name: st.Name,
			Text: st.Name + ": " + st.Kind + " " + dur(st.For) + " — " + st.Detail})
	}
	for _, p := range []sources.PoolLoad{d.Capacity.Prefill, d.Capacity.Decode} {
		if u := p.Utilisation; u.Present && u.Value >= 1 && !p.LowerBound {
			out = append(out, sources.Finding{Severity: sources.SevWarn, Kind: "capacity", Name: p.Role.String(),
				Text: fmt.Sprintf("%s pool over capacity by %s %s: %s offered vs %s sustained (%s); need %d workers",
					p.Role, Num(p.Offered.Value-p.Capacity.Value), p.Unit, Num(p.Offered.Value), Num(p.Capacity.Value), Pct(u.Value), p.WorkersNeeded)})
		}
	}
	for _, l := range d.Capacity.Transfer.Links {
		if l.Queued {
			out = append(out, sources.Finding{Severity: sources.SevWarn, Kind: "capacity", Name: l.Name,
				Text: l.Name + ": KV transfers overlap — " + Num(l.InFlight.Value) + " in flight on average (they queue behind each other); " +
					Bytes(l.Rate.Value) + " sent at " + Bytes(l.Bandwidth.Value) + " per transfer"})
		}
	}
	for _, v := range d.Hits {
		if v.Large {
			// A gap between different scales (the legacy router's
			// per-request booleans against tokens) is shown, not alarmed on.
			sev := sources.SevWarn
			if !v.SameScale || len(v.Causes) > 0 && v.Causes[0].Kind == sources.CauseTakesMisses {
				sev = sources.SevInfo
			}
			kind := "cache-gap"
			if v.Basis == ownBasis {
				// No prediction to miss: the worker's own hit fell while
				// it churns its full KV pool.
				kind = "kv-pressure"
			}
			out = append(out, sources.Finding{Severity: sev, Kind: kind, Name: v.Name,
				Text: v.Name + ": " + v.Verdict})
		}
	}
	seen := map[string]bool{}
	for _, v := range d.Hits {
		for _, c := range v.Causes {
			if c.Kind == sources.CauseReplicasDisagree && !v.Large && v.Scope == "worker" && !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, sources.Finding{Severity: sources.SevWarn, Kind: "replicas-disagree", Name: v.Name,
					Text: v.Name + ": " + c.Evidence})
			}
		}
	}
	if r := d.Admission.RejectedShare; r.Present && r.Value >= th.ErrorRate {
		out = append(out, sources.Finding{Severity: sources.SevWarn, Kind: "rejections",
			Text: "rejected " + Pct(r.Value) + " of requests at the gateways"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// prefillSide returns the workers that prefill: the prefill pool, or the
// unified (and unknown-role) workers when the fleet is not disaggregated.
func prefillSide(s *sources.Snapshot) ([]*sources.WorkerView, *sources.PoolView) {
	var ws []*sources.WorkerView
	for i := range s.Workers {
		if s.Workers[i].Role == sources.RolePrefill {
			ws = append(ws, &s.Workers[i])
		}
	}
	if len(ws) > 0 {
		return ws, &s.Prefill
	}
	for i := range s.Workers {
		if r := s.Workers[i].Role; r == sources.RoleUnified || r == sources.RoleUnknown {
			ws = append(ws, &s.Workers[i])
		}
	}
	return ws, &s.Unified
}

// decodeSide returns the workers that decode: the decode pool, or the
// unified (and unknown-role) workers.
func decodeSide(s *sources.Snapshot) ([]*sources.WorkerView, *sources.PoolView) {
	var ws []*sources.WorkerView
	for i := range s.Workers {
		if s.Workers[i].Role == sources.RoleDecode {
			ws = append(ws, &s.Workers[i])
		}
	}
	if len(ws) > 0 {
		return ws, &s.Decode
	}
	for i := range s.Workers {
		if r := s.Workers[i].Role; r == sources.RoleUnified || r == sources.RoleUnknown {
			ws = append(ws, &s.Workers[i])
		}
	}
	return ws, &s.Unified
}

// step is the time between two history points.
func step(s *sources.Snapshot) time.Duration {
	for _, name := range []string{"input_tps", "output_tps"} {
		if ser, ok := s.Charts[name]; ok && ser.Step > 0 {
			return ser.Step
		}
	}
	for i := range s.Workers {
		for _, h := range s.Workers[i].History {
			if len(h) > 0 && s.ChartSpan > 0 {
				return s.ChartSpan / time.Duration(len(h))
			}
		}
	}
	return s.Interval
}

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Pct formats a ratio as a whole percentage ("46%"), or one decimal
// under 10 % ("2.5%").
func Pct(v float64) string {
	if !finite(v) {
		return "—"
	}
	p := v * 100
	if math.Abs(p) < 10 && math.Abs(p-math.Round(p)) > 0.05 {
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + "%"
}

// Pts formats a ratio difference as percentage points ("46 pts").
func Pts(v float64) string {
	return strconv.FormatFloat(math.Round(v*100), 'f', 0, 64) + " pts"
}

// Num formats a rate or count compactly: 950, 9.5k, 1.2M, 0.35.
func Num(v float64) string {
	if !finite(v) {
		return "—"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a >= 10 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Bytes formats a byte rate: "2.1 GB/s", "340 MB/s".
func Bytes(v float64) string {
	if !finite(v) {
		return "—"
	}
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + " GB/s"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 0, 64) + " MB/s"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + " kB/s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " B/s"
}

// dur formats an age or length: "40s", "2m10s", "1h5m".
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		m, sec := int(d/time.Minute), int(d%time.Minute/time.Second)
		if sec == 0 {
			return strconv.Itoa(m) + "m"
		}
		return strconv.Itoa(m) + "m" + strconv.Itoa(sec) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + strconv.Itoa(int(d%time.Hour/time.Minute)) + "m"
}

// median returns the median of vs (NaN for none); vs is sorted in place.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// at returns series[i], NaN out of range.
func at(series []float64, i int) float64 {
	if i < 0 || i >= len(series) {
		return math.NaN()
	}
	return series[i]
}
