package diagnose

import (
	"math"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Cold-start detection.
const (
	// coldSpan is the "first minute" compared with the steady state.
	coldSpan = time.Minute
	// burstFactor is how far input tokens/s must jump over the median of
	// the minute before to count as a burst.
	burstFactor = 1.5
	// coldHitDrop is how far (ratio points) a burst's first-minute hit
	// ratio must fall below the minute before for a cold cache.
	coldHitDrop = 0.05
	// ttftRise is how many times the minute before a burst's first-minute
	// TTFT p99 must reach for other diagnoses to be named as its cause.
	ttftRise = 1.5
)

// coldStarts lists, inside the chart span, each prefill-side worker's
// first minute after a restart or join (its hit ratio against its pool
// peers' now), and the fleet's first minute after the latest traffic
// burst (TTFT p99 and hit ratio against the minute before).
func coldStarts(s *sources.Snapshot) []sources.ColdStart {
	st := step(s)
	if st <= 0 {
		return nil
	}
	var out []sources.ColdStart
	ws, _ := prefillSide(s)
	e := &evidence{s: s, ws: ws}
	for _, w := range ws {
		last := lastStart(s, w)
		if last == nil || s.Time.Sub(last.Time) > s.ChartSpan {
			continue
		}
		first, _, _ := windowHit(s, w, last.Time, last.Time.Add(coldSpan), st)
		peers, _ := e.peers(w)
		steady := math.NaN()
		if peers.Present {
			steady = peers.Ratio
		}
		cs := sources.ColdStart{Kind: last.Kind, Name: w.Name, At: last.Time, Metric: "hit", Unit: "ratio",
			First: first, Steady: steady, Cold: true}
		what := "restarted"
		if last.Kind == "joined" {
			what = "joined"
		}
		cs.Text = w.Name + " " + what + " " + sources.FormatAge(s.Time.Sub(last.Time)) + " ago: hit " + Pct(first) +
			" in its first minute of traffic vs " + Pct(steady) + " on its peers now"
		if !finite(first) {
			cs.Text = w.Name + " " + what + " " + sources.FormatAge(s.Time.Sub(last.Time)) + " ago: no traffic yet"
		}
		out = append(out, cs)
	}
	return append(out, burst(s, st)...)
}

// stepEnd returns the end time of history point j of n.
func stepEnd(s *sources.Snapshot, st time.Duration, j, n int) time.Time {
	return s.Time.Truncate(st).Add(-time.Duration(n-1-j) * st)
}

// windowHit is w's hit ratio over the history points ending in (from,
// to], from the first point with traffic: Σ cached ÷ Σ prompt tokens per
// step, or the mean per-step ratio when cached tokens have no history
// (hit and total are then 0). Points are rates, so hit and total are
// token rates summed over points: multiply by the step for tokens.
func windowHit(s *sources.Snapshot, w *sources.WorkerView, from, to time.Time, st time.Duration) (ratio, hit, total float64) {
	prompt, cached := w.History[sources.SigPromptTokens], w.History[sources.SigCachedTokens]
	n := len(prompt)
	if n == 0 {
		n = len(w.HitHistory)
	}
	var sumRatio float64
	k := 0
	started := false
	for j := 0; j < n; j++ {
		end := stepEnd(s, st, j, n)
		if !end.After(from) {
			continue
		}
		p := at(prompt, j)
		if !started {
			if !(p > 0) && !finite(at(w.HitHistory, j)) {
				continue
			}
			started = true
			to = end.Add(to.Sub(from)) // the minute starts with the traffic
		}
		if end.After(to) {
			break
		}
		if c := at(cached, j); finite(p) && p > 0 && finite(c) {
			hit += c
			total += p
		}
		if r := at(w.HitHistory, j); finite(r) {
			sumRatio += r
			k++
		}
	}
	switch {
	case total > 0:
		return math.Min(1, hit/total), hit, total
	case k > 0:
		return sumRatio / float64(k), 0, 0
	}
	return math.NaN(), 0, 0
}

// burst finds the latest onset of a traffic burst in the fleet's input
// tokens/s and compares the minute after it with the minute before.
func burst(s *sources.Snapshot, st time.Duration) []sources.ColdStart {
	in := s.Charts["input_tps"].Points
	per := int(coldSpan / st)
	if per < 3 || len(in) < 2*per {
		return nil
	}
	onset := -1
	for j := per; j < len(in); j++ {
		base := median(finiteOf(in[j-per : j]))
		if !(base > 0) || len(finiteOf(in[j-per:j])) < per/2 {
			continue
		}
		if in[j] >= burstFactor*base && !(at(in, j-1) >= burstFactor*base) {
			onset = j
		}
	}
	if onset < 0 {
		return nil
	}
	at0 := stepEnd(s, st, onset, len(in))
	mean := func(name string, a, b int) float64 {
		v := finiteOf(s.Charts[name].Points[max(0, a):min(b, len(s.Charts[name].Points))])
		if len(v) == 0 {
			return math.NaN()
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	// Hit ratio first: a burst is a cold start only when it fell.
	hitFirst, hitSteady := math.NaN(), math.NaN()
	hasHit := len(s.Charts["hit_actual"].Points) == len(in)
	if hasHit {
		hitFirst, hitSteady = mean("hit_actual", onset, onset+per), mean("hit_actual", onset-per, onset)
	}
	cold := finite(hitFirst) && finite(hitSteady) && hitFirst <= hitSteady-coldHitDrop
	var out []sources.ColdStart
	ago := dur(s.Time.Sub(at0))
	if p := s.Charts["ttft_p99"].Points; len(p) == len(in) {
		first, steady := mean("ttft_p99", onset, onset+per), mean("ttft_p99", onset-per, onset)
		out = append(out, sources.ColdStart{Kind: "burst", Name: "fleet", At: at0, Metric: "TTFT p99", Unit: "s",
			First: first, Steady: steady, Cold: cold,
			Text: "burst " + ago + " ago (input ×" + ratio(in[onset], median(finiteOf(in[onset-per:onset]))) +
				"): TTFT p99 " + secs(first) + " in its first minute vs " + secs(steady) + " before"})
	}
	if hasHit {
		text := "burst " + ago + " ago: hit " + Pct(hitFirst) + " in its first minute vs " + Pct(hitSteady) + " before"
		if !cold && finite(hitFirst) && finite(hitSteady) {
			text += ": no drop, not a cold cache"
		}
		out = append(out, sources.ColdStart{Kind: "burst", Name: "fleet", At: at0, Metric: "hit", Unit: "ratio",
			First: hitFirst, Steady: hitSteady, Cold: cold, Text: text})
	}
	return out
}

// explainBursts names, on each burst whose TTFT p99 rose, the other
// diagnoses that account for the rise: KV paths whose transfers queue,
// stalls, a pool at or over its target utilisation. They are figures over
// the window, so they speak for the burst only while its first minute
// overlaps the window. Run calls it once capacity and stalls are known.
func explainBursts(s *sources.Snapshot) {
	d := &s.Diagnosis
	for i := range d.Capacity.ColdStarts {
		cs := &d.Capacity.ColdStarts[i]
		if cs.Kind != "burst" || cs.Metric != "TTFT p99" || !(cs.First > ttftRise*cs.Steady) ||
			s.Time.Sub(cs.At) >= s.Window+coldSpan {
			continue
		}
		why := otherCauses(s)
		if len(why) == 0 {
			continue
		}
		cs.Explained = strings.Join(why, "; ")
		if cs.Cold {
			cs.Text += " — cold cache, and also " + cs.Explained
		} else {
			cs.Text += " — not a cold cache: " + cs.Explained
		}
	}
}

// otherCauses are the window's diagnoses that raise TTFT without a cold
// cache, in words.
func otherCauses(s *sources.Snapshot) []string {
	d := &s.Diagnosis
	var out []string
	for _, l := range d.Capacity.Transfer.Links {
		if l.Queued {
			out = append(out, l.Name+"'s KV transfers queue behind each other ("+Num(l.InFlight.Value)+" in flight on average)")
		}
	}
	for _, st := range d.Stalls {
		out = append(out, st.Name+": "+st.Kind)
	}
	for _, p := range []sources.PoolLoad{d.Capacity.Prefill, d.Capacity.Decode} {
		if u := p.Utilisation; u.Present && !p.LowerBound && u.Value >= d.Capacity.TargetUtil {
			what := "at " + Pct(u.Value) + " of its sustained rate"
			if u.Value >= 1 {
				what = "over capacity (" + Pct(u.Value) + " of its sustained rate)"
			}
			out = append(out, p.Role.String()+" pool "+what)
		}
	}
	return out
}

func finiteOf(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if finite(x) {
			out = append(out, x)
		}
	}
	return out
}

func ratio(a, b float64) string {
	if !(b > 0) || !finite(a) {
		return "—"
	}
	return Num(a / b)
}

// secs formats seconds: "850ms", "2.4s".
func secs(v float64) string {
	switch {
	case !finite(v):
		return "—"
	case v < 1:
		return Num(v*1000) + "ms"
	}
	return Num(v) + "s"
}
