package schema

import (
	"math"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// mapper walks one adapter's table over one scrape's families. Its scratch
// slices are reused from rule to rule, so a scrape costs a few allocations
// for the output and none per series.
type mapper struct {
	ad   *adapter
	fams map[string]*dto.MetricFamily
	obs  *sources.Observation

	groups []group // series of the current family, replica copies collapsed
	accs   []acc   // per-key results of the current rule
	hist   histBuilder

	// engine_type values seen on kept series (SGLang workers only).
	probeRole             bool
	sawPrefill, sawDecode bool
}

// group is one distinct series of a family once replica labels are ignored.
type group struct {
	key  string
	hash uint64
	rep  *dto.Metric // representative series (the chosen copy)
	val  float64     // scalar value (max, or min for aggMin, over copies)
	cnt  float64     // histogram: observations in rep
}

// acc is one key's running result for a rule.
type acc struct {
	key           string
	sum, min, max float64
	n             int
}

func newMapper(ad *adapter, fams map[string]*dto.MetricFamily) *mapper {
	return &mapper{
		ad:   ad,
		fams: fams,
		obs: &sources.Observation{
			Generation: ad.generation,
			Engine:     ad.engine,
			EngineRole: ad.role,
			Points:     make([]sources.Point, 0, len(ad.rules)),
			Sources:    make(map[sources.Signal]string, len(ad.rules)),
		},
		groups: make([]group, 0, 16),
		accs:   make([]acc, 0, 8),
	}
}

// run applies every rule of the adapter.
func (m *mapper) run() {
	for i := range m.ad.rules {
		m.apply(&m.ad.rules[i])
	}
}

// apply maps one rule: the first alias with at least one usable series wins
// (or every present alias, for rules marked all).
func (m *mapper) apply(r *rule) {
	m.accs = m.accs[:0]
	m.hist.reset()
	isHist := r.sig.Info().Kind == sources.Histogram
	types := r.acceptedTypes()
	src := ""
	for ai := range r.aliases {
		a := &r.aliases[ai]
		mt := a.match
		if mt.label == "" {
			mt = r.match
		}
		found := false
		for _, name := range a.names {
			mf := m.fams[name]
			if mf == nil || maskOf(mf.GetType())&types == 0 {
				continue
			}
			var ok bool
			if isHist {
				ok = m.histFamily(r, mt, mf)
			} else {
				ok = m.scalarFamily(r, mt, mf)
			}
			if ok {
				if src == "" {
					src = name
				} else {
					src += "+" + name
				}
				found = true
				break
			}
		}
		if found && !r.all {
			break
		}
	}
	if src == "" {
		return
	}
	m.obs.Sources[r.sig] = src
	if isHist {
		m.obs.Hists = append(m.obs.Hists, m.hist.emit(r.sig))
		return
	}
	for i := range m.accs {
		a := &m.accs[i]
		v := a.sum
		switch r.agg {
		case aggMax:
			v = a.max
		case aggMin:
			v = a.min
		case aggMean:
			v = a.sum / float64(a.n)
		}
		m.obs.Points = append(m.obs.Points, sources.Point{Signal: r.sig, Key: a.key, Value: v})
	}
}

// scalarFamily folds the usable series of one counter/gauge family into
// m.accs and reports whether there were any.
func (m *mapper) scalarFamily(r *rule, mt match, mf *dto.MetricFamily) bool {
	m.groups = m.groups[:0]
	active := m.activePrefs(mf)
	for _, s := range mf.Metric {
		if !m.keep(s, mt, active) {
			continue
		}
		v, ok := scalarValue(s)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) || (r.dropNeg && v < 0) {
			continue
		}
		if r.v03Percent && isV03(s) {
			v /= 100
		}
		key, ok := m.keyOf(r, s)
		if !ok {
			continue
		}
		h := m.seriesHash(s)
		if g := m.findGroup(key, h, s); g != nil {
			if (r.agg == aggMin && v < g.val) || (r.agg != aggMin && v > g.val) {
				g.val, g.rep = v, s
			}
			continue
		}
		m.groups = append(m.groups, group{key: key, hash: h, rep: s, val: v})
	}
	if len(m.groups) == 0 {
		return false
	}
	for i := range m.groups {
		g := &m.groups[i]
		a := m.accFor(g.key)
		a.sum += g.val
		a.min = math.Min(a.min, g.val)
		a.max = math.Max(a.max, g.val)
		a.n++
	}
	return true
}

// histFamily merges the series of one histogram/summary family into m.hist
// and reports whether it could. One incomplete series (a lost _sum or
// _count line) makes the whole family unusable for this scrape: a merged
// figure without it would look like a counter reset downstream.
func (m *mapper) histFamily(r *rule, mt match, mf *dto.MetricFamily) bool {
	m.groups = m.groups[:0]
	active := m.activePrefs(mf)
	for _, s := range mf.Metric {
		if !m.keep(s, mt, active) {
			continue
		}
		_, c, ok := histTotals(s)
		if !ok {
			return false
		}
		h := m.seriesHash(s)
		if g := m.findGroup("", h, s); g != nil {
			if c > g.cnt {
				g.cnt, g.rep = c, s
			}
			continue
		}
		m.groups = append(m.groups, group{hash: h, rep: s, cnt: c})
	}
	if len(m.groups) == 0 {
		return false
	}
	for i := range m.groups {
		m.hist.add(m.groups[i].rep)
	}
	return true
}

// keyOf returns the series' key for a keyed rule ("" for unkeyed rules);
// false when a keyed rule's label is missing.
func (m *mapper) keyOf(r *rule, s *dto.Metric) (string, bool) {
	if r.keyLabel == "" {
		return "", true
	}
	raw := labelValue(s, r.keyLabel)
	if raw == "" {
		return "", false
	}
	return r.keyFn(raw), true
}

// accFor returns the accumulator for key, appending one when new. Keys are
// few (workers, status classes), so a scan beats a map here.
func (m *mapper) accFor(key string) *acc {
	for i := range m.accs {
		if m.accs[i].key == key {
			return &m.accs[i]
		}
	}
	m.accs = append(m.accs, acc{key: key, min: math.Inf(1), max: math.Inf(-1)})
	return &m.accs[len(m.accs)-1]
}

// findGroup returns the group holding a copy of s (same key, same labels
// apart from replica labels), or nil.
func (m *mapper) findGroup(key string, h uint64, s *dto.Metric) *group {
	for i := range m.groups {
		g := &m.groups[i]
		if g.hash == h && g.key == key && m.sameSeries(g.rep, s) {
			return g
		}
	}
	return nil
}

// activePrefs returns a bit per adapter preference that applies to this
// family: it has both total and breakdown series.
func (m *mapper) activePrefs(mf *dto.MetricFamily) uint8 {
	var active uint8
	for i, p := range m.ad.prefer {
		var total, other bool
		for _, s := range mf.Metric {
			if labelValue(s, p.label) == p.total {
				total = true
			} else {
				other = true
			}
			if total && other {
				active |= 1 << i
				break
			}
		}
	}
	return active
}

// keep applies the rule's label match and the active preferences.
func (m *mapper) keep(s *dto.Metric, mt match, active uint8) bool {
	if mt.label != "" {
		v := labelValue(s, mt.label)
		if mt.values == nil {
			if v == "" {
				return false
			}
		} else if !contains(mt.values, v) {
			return false
		}
	}
	for i, p := range m.ad.prefer {
		if active&(1<<i) != 0 && labelValue(s, p.label) != p.total {
			return false
		}
	}
	return true
}

// seriesHash hashes the series' labels, order-independently, leaving out
// replica labels when the adapter dedupes ranks. It also notes engine_type.
func (m *mapper) seriesHash(s *dto.Metric) uint64 {
	var h uint64
	for _, lp := range s.Label {
		n := lp.GetName()
		if m.ad.dedupeRanks && isReplica(n) {
			continue
		}
		v := lp.GetValue()
		if m.probeRole && n == "engine_type" {
			switch v {
			case "prefill":
				m.sawPrefill = true
			case "decode":
				m.sawDecode = true
			}
		}
		h += hashPair(n, v)
	}
	return h
}

// sameSeries reports whether a and b carry the same labels, replica labels
// aside when the adapter dedupes ranks.
func (m *mapper) sameSeries(a, b *dto.Metric) bool {
	na := 0
	for _, lp := range a.Label {
		n := lp.GetName()
		if m.ad.dedupeRanks && isReplica(n) {
			continue
		}
		na++
		if v, ok := lookup(b, n); !ok || v != lp.GetValue() {
			return false
		}
	}
	nb := 0
	for _, lp := range b.Label {
		if !(m.ad.dedupeRanks && isReplica(lp.GetName())) {
			nb++
		}
	}
	return na == nb
}
