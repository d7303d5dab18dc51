package expo

import (
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/pdtop/pdtop/sources/sanitize"
)

var hashSeed = maphash.MakeSeed()

// smallDedupe is the series count up to which duplicates are found by
// comparing hashes pairwise instead of through a map.
const smallDedupe = 16

// normalise sanitises names, labels and HELP, collapses duplicate series
// (keeping the last), drops families whose name is not printable and
// applies the series cap, in a deterministic order: families in order of
// first appearance in the body.
func (s *scanner) normalise(fams map[string]*dto.MetricFamily) {
	names := make([]string, 0, len(fams))
	for _, b := range s.sc.blocks {
		if _, ok := fams[b.fam.name]; ok {
			names = append(names, b.fam.name)
		}
	}
	if len(names) < len(fams) {
		// Families expfmt named differently from their block (rare):
		// append them in name order.
		var extra []string
		for name := range fams {
			if f := s.byName[name]; f == nil || !f.keep || f.kept == 0 {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		names = append(names, extra...)
	}

	var h maphash.Hash
	h.SetSeed(hashSeed)
	total := 0
	for _, name := range names {
		mf := fams[name]
		if mf == nil {
			continue
		}
		if !printable(name) {
			s.probs.add(s.lineOf(name), "metric name "+sanitize.Text(name)+" is not printable; family dropped", nil)
			s.dropped += len(mf.Metric)
			delete(fams, name)
			continue
		}
		if mf.Help != nil {
			if t := sanitize.Text(*mf.Help); t != *mf.Help {
				mf.Help = proto.String(t)
			}
		}
		ms := mf.Metric
		for _, m := range ms {
			sanitizeLabels(m.Label)
			sortLabels(m.Label)
			switch {
			case m.Histogram != nil:
				s.dropDuplicateBuckets(name, m.Histogram)
			case m.Summary != nil:
				s.dropDuplicateQuantiles(name, m.Summary)
			}
		}
		ms = s.dedupe(name, ms, &h)
		if total+len(ms) > s.opt.MaxSeries {
			keep := max(s.opt.MaxSeries-total, 0)
			s.warn.seriesCapped += len(ms) - keep
			ms = ms[:keep]
		}
		total += len(ms)
		if len(ms) == 0 {
			delete(fams, name)
			continue
		}
		mf.Metric = ms
	}
	s.series = total

	declared := s.declared[:0]
	for _, name := range s.declared {
		if printable(name) {
			declared = append(declared, name)
		}
	}
	s.declared = declared
}

// lineOf returns the first line of the family expfmt called name: the
// pre-pass family of that name, else the kept family whose name is the
// longest prefix of it, else line 1.
func (s *scanner) lineOf(name string) int {
	if f := s.byName[name]; f != nil {
		return int(f.firstLine)
	}
	best, line := -1, 1
	for _, b := range s.sc.blocks {
		if n := len(b.fam.name); n > best && strings.HasPrefix(name, b.fam.name) {
			best, line = n, int(b.fam.firstLine)
		}
	}
	return line
}

// printable reports whether name can be shown as is: non-empty valid
// UTF-8 with nothing sanitize would escape.
func printable(name string) bool {
	return name != "" && utf8.ValidString(name) && sanitize.Text(name) == name
}

func sanitizeLabels(lps []*dto.LabelPair) {
	for _, lp := range lps {
		if lp == nil {
			continue
		}
		if n := lp.GetName(); n != "" {
			if t := sanitize.Text(n); t != n {
				lp.Name = proto.String(t)
			}
		}
		if v := lp.GetValue(); v != "" {
			if t := sanitize.Text(v); t != v {
				lp.Value = proto.String(t)
			}
		}
	}
}

// sortLabels sorts label pairs by name; exporters usually emit them
// sorted already, which insertion sort handles in one pass.
func sortLabels(lps []*dto.LabelPair) {
	for i := 1; i < len(lps); i++ {
		for j := i; j > 0 && lps[j].GetName() < lps[j-1].GetName(); j-- {
			lps[j], lps[j-1] = lps[j-1], lps[j]
		}
	}
}

func labelHash(h *maphash.Hash, lps []*dto.LabelPair) uint64 {
	h.Reset()
	for _, lp := range lps {
		h.WriteString(lp.GetName())
		h.WriteByte(0xff) // never part of valid UTF-8
		h.WriteString(lp.GetValue())
		h.WriteByte(0xfe)
	}
	return h.Sum64()
}

func sameLabels(a, b []*dto.LabelPair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].GetName() != b[i].GetName() || a[i].GetValue() != b[i].GetValue() {
			return false
		}
	}
	return true
}

// dedupe drops all but the last of series with the same (sorted,
// sanitised) label set. Duplicates are never summed.
func (s *scanner) dedupe(name string, ms []*dto.Metric, h *maphash.Hash) []*dto.Metric {
	if len(ms) < 2 {
		return ms
	}
	dups := 0
	if len(ms) <= smallDedupe {
		var keys [smallDedupe]uint64
		for i, m := range ms {
			keys[i] = labelHash(h, m.Label)
			for j := 0; j < i; j++ {
				if ms[j] != nil && keys[j] == keys[i] && sameLabels(ms[j].Label, m.Label) {
					ms[j] = nil
					dups++
				}
			}
		}
	} else {
		idx := make(map[uint64]int, len(ms))
		for i, m := range ms {
			k := labelHash(h, m.Label)
			if j, ok := idx[k]; ok && sameLabels(ms[j].Label, m.Label) {
				ms[j] = nil
				dups++
			}
			idx[k] = i
		}
	}
	if dups == 0 {
		return ms
	}
	out := ms[:0]
	for _, m := range ms {
		if m != nil {
			out = append(out, m)
		}
	}
	clear(ms[len(out):])
	s.warn.dupSeries(name, dups)
	return out
}

// dropDuplicateBuckets keeps the last bucket for each upper bound: a
// histogram exposed twice with the same labels comes out of expfmt as one
// series with every bucket twice. Non-monotonic counts are left alone
// (the store clamps them).
func (s *scanner) dropDuplicateBuckets(name string, h *dto.Histogram) {
	bs := h.Bucket
	if ascending(len(bs), func(i int) float64 { return bs[i].GetUpperBound() }) {
		return
	}
	first := make(map[float64]int, len(bs))
	out := bs[:0]
	for _, b := range bs {
		ub := b.GetUpperBound()
		if i, ok := first[ub]; ok {
			out[i] = b
			continue
		}
		first[ub] = len(out)
		out = append(out, b)
	}
	if n := len(bs) - len(out); n > 0 {
		clear(bs[len(out):])
		h.Bucket = out
		s.warn.dupSeries(name, (n+len(out)-1)/len(out))
	}
}

// dropDuplicateQuantiles does for summaries what dropDuplicateBuckets
// does for histograms.
func (s *scanner) dropDuplicateQuantiles(name string, sm *dto.Summary) {
	qs := sm.Quantile
	if ascending(len(qs), func(i int) float64 { return qs[i].GetQuantile() }) {
		return
	}
	first := make(map[float64]int, len(qs))
	out := qs[:0]
	for _, q := range qs {
		v := q.GetQuantile()
		if i, ok := first[v]; ok {
			out[i] = q
			continue
		}
		first[v] = len(out)
		out = append(out, q)
	}
	if n := len(qs) - len(out); n > 0 {
		clear(qs[len(out):])
		sm.Quantile = out
		s.warn.dupSeries(name, (n+len(out)-1)/len(out))
	}
}

// ascending reports whether the n keys are strictly ascending (so no key
// repeats); NaN keys make it false.
func ascending(n int, key func(int) float64) bool {
	for i := 1; i < n; i++ {
		if !(key(i) > key(i-1)) {
			return false
		}
	}
	return true
}
