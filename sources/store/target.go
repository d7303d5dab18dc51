package store

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// colPart says which part of a signal sample a column holds.
type colPart uint8

const (
	partValue  colPart = iota // gauge value or counter value
	partSum                   // histogram _sum
	partCount                 // histogram _count
	partBucket                // histogram cumulative bucket at bound
)

type colKey struct {
	sig   sources.Signal
	key   string
	part  colPart
	bound float64
}

// column describes one stored series of a target.
type column struct {
	colKey
	counter bool    // reset-corrected cumulative
	lastRaw float64 // last raw value seen (NaN before the first)
	offset  float64 // added to raw values: sum of pre-reset values
	seenAt  int     // the scrape number (targetState.samples) that last had it
	// restarted marks a counter that was absent when its target's restart
	// was detected (counters are exposed only once non-zero, so a fresh
	// process shows them later): until it is back it is flat, not unknown
	// (see counterDelta).
	restarted bool
}

// histLayout lists, for one (signal, key) histogram, its column indexes.
type histLayout struct {
	sum, count int
	bounds     []float64 // ascending; may end with +Inf
	buckets    []int     // column per bound
}

type histID struct {
	sig sources.Signal
	key string
}

// targetState is everything the store keeps for one target.
type targetState struct {
	t sources.Target

	cols    []column
	index   map[colKey]int
	hists   map[histID]*histLayout
	scalars map[histID]int // (signal, key) → value column
	hist    history

	// scrape status
	health      sources.Health
	lastErr     *sources.ScrapeError
	lastSuccess time.Time
	lastAttempt time.Time
	duration    time.Duration
	bytesWire   int64
	bytesBody   int64
	stats       sources.ParseStats
	slow        bool
	generation  string
	engine      string
	engineRole  sources.Role
	sourceNames map[sources.Signal]string
	via         string
	directErr   *sources.ScrapeError

	// restart detection
	pids       map[string]bool
	markers    map[string]float64
	restarts   []time.Time
	restartWhy []string
	samples    int  // successful scrapes ingested
	fresh      bool // the first successful scrape had counted no work

	// idx is the chart-point frame index of the Snapshot being built.
	idx []stepIdx
}

func newTargetState(t sources.Target, o Options) *targetState {
	return &targetState{
		t:           t,
		index:       map[colKey]int{},
		hists:       map[histID]*histLayout{},
		scalars:     map[histID]int{},
		hist:        newHistory(o.fineCap(), o.coarseCap(), o.CoarseStep),
		sourceNames: map[sources.Signal]string{},
		pids:        map[string]bool{},
		markers:     map[string]float64{},
	}
}

func (ts *targetState) column(k colKey, counter bool) int {
	if i, ok := ts.index[k]; ok {
		return i
	}
	ts.cols = append(ts.cols, column{colKey: k, counter: counter, lastRaw: math.NaN()})
	i := len(ts.cols) - 1
	ts.index[k] = i
	return i
}

func (ts *targetState) histLayoutFor(h *sources.Hist) *histLayout {
	id := histID{h.Signal, h.Key}
	hl := ts.hists[id]
	if hl == nil {
		hl = &histLayout{
			sum:   ts.column(colKey{h.Signal, h.Key, partSum, 0}, true),
			count: ts.column(colKey{h.Signal, h.Key, partCount, 0}, true),
		}
		ts.hists[id] = hl
	}
	if !sameBounds(hl.bounds, h.Bounds) {
		// A new bucket layout (version change or reconfiguration): new bound
		// columns; bounds shared with the old layout keep their history.
		hl.bounds = append(hl.bounds[:0:0], h.Bounds...)
		hl.buckets = make([]int, len(h.Bounds))
		for i, b := range h.Bounds {
			hl.buckets[i] = ts.column(colKey{h.Signal, h.Key, partBucket, b}, true)
		}
	}
	return hl
}

func sameBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsInf(a[i], 1) && math.IsInf(b[i], 1)) {
			return false
		}
	}
	return true
}

// ingest stores one observation as a new frame and returns the restart
// reason when this scrape shows the target restarted ("" otherwise).
func (ts *targetState) ingest(at time.Time, obs *sources.Observation) string {
	vals := make([]float64, len(ts.cols), len(ts.cols)+8)
	for i := range vals {
		vals[i] = math.NaN()
	}
	set := func(i int, v float64) {
		for len(vals) <= i {
			vals = append(vals, math.NaN())
		}
		vals[i] = v
	}
	var decreased string
	record := func(i int, raw float64) {
		c := &ts.cols[i]
		if !c.counter {
			set(i, raw)
			return
		}
		if math.IsNaN(raw) {
			return
		}
		if !math.IsNaN(c.lastRaw) && raw < c.lastRaw {
			// Prometheus' rule: any decrease is a reset; the pre-reset value
			// is added back so the corrected series stays monotonic.
			c.offset += c.lastRaw
			// Only a series present in the previous scrape says the process
			// restarted now: lazily created series (cached_tokens_total,
			// labelled counters) reappear later, lower, after the restart
			// was already seen.
			if decreased == "" && c.part != partSum && c.seenAt == ts.samples {
				decreased = fmt.Sprintf("counter went down (%s %s → %s)",
					sourceName(obs, c.sig), fmtNum(c.lastRaw), fmtNum(raw))
			}
		}
		c.restarted = false
		c.lastRaw = raw
		c.seenAt = ts.samples + 1
		set(i, raw+c.offset)
	}

	for _, p := range obs.Points {
		info := p.Signal.Info()
		i := ts.scalarCol(p.Signal, p.Key, info.Kind == sources.Counter)
		record(i, p.Value)
	}
	for hi := range obs.Hists {
		h := &obs.Hists[hi]
		hl := ts.histLayoutFor(h)
		record(hl.sum, h.Sum)
		record(hl.count, h.Count)
		for bi, b := range hl.buckets {
			if bi < len(h.Counts) {
				record(b, h.Counts[bi])
			}
		}
	}
	ts.hist.push(frame{t: at, v: vals})

	// Restart signals other than a counter decrease.
	why := decreased
	newPID := ""
	hadPIDs := len(ts.pids) > 0
	for _, p := range obs.PIDs {
		if !ts.pids[p] {
			if hadPIDs && newPID == "" {
				newPID = p
			}
			ts.pids[p] = true
		}
	}
	if why == "" && newPID != "" {
		why = "new scheduler pid " + newPID
	}
	for k, v := range obs.StartMarkers {
		old, seen := ts.markers[k]
		ts.markers[k] = v
		if why == "" && seen && old != v && !(math.IsNaN(old) && math.IsNaN(v)) {
			why = "start time changed (" + k + ")"
		}
	}
	if why != "" {
		// Counters this scrape did not carry will come back from zero.
		for i := range ts.cols {
			if c := &ts.cols[i]; c.counter && (i >= len(vals) || math.IsNaN(vals[i])) {
				c.restarted = true
			}
		}
	}
	ts.samples++
	return why
}

func (ts *targetState) scalarCol(sig sources.Signal, key string, counter bool) int {
	id := histID{sig, key}
	if i, ok := ts.scalars[id]; ok {
		return i
	}
	i := ts.column(colKey{sig, key, partValue, 0}, counter)
	ts.scalars[id] = i
	return i
}

// keysOf returns the keys seen for a keyed scalar signal, sorted.
func (ts *targetState) keysOf(sig sources.Signal) []string {
	var out []string
	for id := range ts.scalars {
		if id.sig == sig {
			out = append(out, id.key)
		}
	}
	sort.Strings(out)
	return out
}

func sourceName(obs *sources.Observation, sig sources.Signal) string {
	if n := obs.Sources[sig]; n != "" {
		return n
	}
	return sig.String()
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
