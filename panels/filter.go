package panels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// Filter selects the rows of every per-worker table. Its text is a list
// of terms, all of which a worker must match:
//
//	name or part of it    p-0, 10.0.0.7, decode-1 (case-insensitive, also the URL)
//	role                  prefill, decode, unified, gateway
//	state                 up, stale, down, pending, slow, restarted (↻ in the window),
//	                      over (any figure at or over its threshold)
//	figure comparison     gap>0.2  kv>=90%  wait>5  queue>10  itl>50ms  ttft>2s
//	                      hit<0.3  running>0  input>1k  restarts>0
//
// A term starting with "!" is negated (!stale). Comparisons take >, >=,
// <, <= or =. Ratios (gap, hit, kv) accept 0.2 or 20%; latencies (itl,
// ttft: p99 over the window) accept 0.05, 50ms or 2s; counts accept k/M.
// A worker without the figure never matches a comparison.
type Filter struct {
	text  string
	terms []term
}

type termKind uint8

const (
	termName termKind = iota
	termRole
	termState
	termCompare
)

type term struct {
	neg   bool
	kind  termKind
	word  string // name part, role or state (lower case)
	field string
	op    string
	num   float64
}

// filterFields are the figures a comparison can name, with their unit
// ("ratio", "s" or "" for counts and rates).
var filterFields = map[string]string{
	"gap": "ratio", "hit": "ratio", "kv": "ratio",
	"wait": "", "waiting": "", "queue": "", "running": "", "prealloc": "", "bootstrap": "",
	"inflight": "", "transfer": "", "input": "", "output": "", "restarts": "",
	"itl": "s", "ttft": "s",
}

var filterStates = map[string]bool{"up": true, "stale": true, "down": true, "pending": true,
	"slow": true, "restarted": true, "over": true}

// ParseFilter parses a filter's text; an error names the term at fault.
// Empty text is the empty filter, which matches everything.
func ParseFilter(text string) (Filter, error) {
	f := Filter{text: strings.TrimSpace(text)}
	for _, raw := range strings.Fields(f.text) {
		t := term{}
		w := strings.ToLower(raw)
		if strings.HasPrefix(w, "!") {
			t.neg, w = true, w[1:]
		}
		if w == "" {
			return Filter{}, fmt.Errorf("%q: nothing after !", raw)
		}
		if i := strings.IndexAny(w, "<>="); i >= 0 {
			field, rest := w[:i], w[i:]
			op := rest[:1]
			if len(rest) > 1 && rest[1] == '=' {
				op = rest[:2]
			}
			unit, ok := filterFields[field]
			if !ok {
				return Filter{}, fmt.Errorf("%q: unknown figure %q (have gap hit kv wait queue running prealloc bootstrap inflight transfer input output itl ttft restarts)", raw, field)
			}
			v, err := filterNumber(rest[len(op):], unit)
			if err != nil {
				return Filter{}, fmt.Errorf("%q: %v", raw, err)
			}
			t.kind, t.field, t.op, t.num = termCompare, field, op, v
		} else if r := sources.ParseRole(w); r != sources.RoleUnknown && w != "router" && w != "regular" && w != "mixed" {
			t.kind, t.word = termRole, r.String()
		} else if filterStates[w] {
			t.kind, t.word = termState, w
		} else {
			t.kind, t.word = termName, w
		}
		f.terms = append(f.terms, t)
	}
	return f, nil
}

// filterNumber parses a comparison's value in the field's unit.
func filterNumber(s, unit string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("needs a number")
	}
	mult, body := 1.0, s
	switch {
	case strings.HasSuffix(s, "%"):
		mult, body = 0.01, s[:len(s)-1]
	case strings.HasSuffix(s, "ms"):
		mult, body = 1e-3, s[:len(s)-2]
	case strings.HasSuffix(s, "µs") || strings.HasSuffix(s, "us"):
		mult, body = 1e-6, strings.TrimSuffix(strings.TrimSuffix(s, "µs"), "us")
	case strings.HasSuffix(s, "s") && unit == "s":
		body = s[:len(s)-1]
	case strings.HasSuffix(s, "k"):
		mult, body = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "m") && unit == "":
		mult, body = 1e6, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(body, 64)
	if err != nil || !sources.Finite(v) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v *= mult
	if unit == "ratio" && mult == 1 && v > 1 {
		v /= 100 // kv>90 means 90 %
	}
	return v, nil
}

// Text is the filter as typed.
func (f Filter) Text() string { return f.text }

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return len(f.terms) == 0 }

// matcher applies a filter to one snapshot; it builds the lookups it needs
// once.
type matcher struct {
	f       Filter
	s       *sources.Snapshot
	over    map[string]bool
	workers map[string]*sources.WorkerView
}

func (f Filter) matcher(s *sources.Snapshot) *matcher {
	if f.Empty() || s == nil {
		return nil
	}
	return &matcher{f: f, s: s}
}

// Count returns how many of the snapshot's workers match the filter.
func (f Filter) Count(s *sources.Snapshot) (match, total int) {
	if s == nil {
		return 0, 0
	}
	m := f.matcher(s)
	for i := range s.Workers {
		if m.worker(&s.Workers[i]) {
			match++
		}
	}
	return match, len(s.Workers)
}

// worker reports whether w matches (a nil matcher matches everything).
func (m *matcher) worker(w *sources.WorkerView) bool {
	if m == nil {
		return true
	}
	for _, t := range m.f.terms {
		if m.term(t, &w.TargetStatus, w) == t.neg {
			return false
		}
	}
	return true
}

// target reports whether the target with this ID matches: a worker by
// its figures, any other target by name, role and state only.
func (m *matcher) target(id string) bool {
	if m == nil {
		return true
	}
	if m.workers == nil {
		m.workers = map[string]*sources.WorkerView{}
		for i := range m.s.Workers {
			m.workers[m.s.Workers[i].ID] = &m.s.Workers[i]
		}
	}
	if w := m.workers[id]; w != nil {
		return m.worker(w)
	}
	for i := range m.s.Targets {
		ts := &m.s.Targets[i]
		if ts.ID != id {
			continue
		}
		for _, t := range m.f.terms {
			if m.term(t, ts, nil) == t.neg {
				return false
			}
		}
		return true
	}
	return false
}

func (m *matcher) term(t term, ts *sources.TargetStatus, w *sources.WorkerView) bool {
	switch t.kind {
	case termName:
		return strings.Contains(strings.ToLower(ts.Name), t.word) || strings.Contains(strings.ToLower(ts.ID), t.word)
	case termRole:
		return ts.Role.String() == t.word
	case termState:
		switch t.word {
		case "restarted":
			return w != nil && w.Restarted
		case "slow":
			return ts.Slow
		case "over":
			if m.over == nil {
				m.over = map[string]bool{}
				for _, c := range m.s.Crossings() {
					m.over[c.TargetID] = true
				}
			}
			return m.over[ts.ID]
		}
		return ts.Health.String() == t.word
	}
	if w == nil {
		return false
	}
	v, ok := m.figure(t.field, w)
	if !ok || !sources.Finite(v) {
		return false
	}
	switch t.op {
	case ">":
		return v > t.num
	case ">=":
		return v >= t.num
	case "<":
		return v < t.num
	case "<=":
		return v <= t.num
	}
	return v == t.num
}

// figure returns a worker's value for a comparison field.
func (m *matcher) figure(field string, w *sources.WorkerView) (float64, bool) {
	r := func(sig sources.Signal) (float64, bool) {
		x := w.Readings.Get(sig)
		return x.Value, x.Present
	}
	p99 := func(sig sources.Signal) (float64, bool) {
		q := w.Dist(sig)
		return q.P99, q.Present && q.Form == "histogram" && q.Count > 0
	}
	switch field {
	case "gap":
		return m.s.WorkerHitGap(w)
	case "hit":
		return w.Hit.Ratio, w.Hit.Present && w.Hit.Total > 0
	case "kv":
		return r(sources.SigKVUsage)
	case "wait", "waiting":
		return r(sources.SigWaiting)
	case "queue":
		best, ok := 0.0, false
		for _, sig := range []sources.Signal{sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue,
			sources.SigPreallocQueue, sources.SigTransferQueue} {
			if v, has := r(sig); has && (!ok || v > best) {
				best, ok = v, true
			}
		}
		return best, ok
	case "running":
		return r(sources.SigRunning)
	case "prealloc":
		return r(sources.SigPreallocQueue)
	case "bootstrap":
		return r(sources.SigBootstrapQueue)
	case "inflight":
		return r(sources.SigInflightQueue)
	case "transfer":
		return r(sources.SigTransferQueue)
	case "input":
		return r(sources.SigPromptTokens)
	case "output":
		return r(sources.SigGenerationTokens)
	case "restarts":
		return float64(w.Restarts), true
	case "itl":
		return p99(sources.SigITL)
	case "ttft":
		return p99(sources.SigTTFT)
	}
	return 0, false
}
