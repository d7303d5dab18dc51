package expo

import (
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
)

// Sizes of what problems and warnings quote.
const (
	maxMessageCells = 160 // a problem's message
	maxExcerptCells = 80  // a problem's excerpt of the line
	maxNameCells    = 60  // a family name quoted in a warning
	excerptBytes    = 4 * maxExcerptCells
)

// problems keeps the max problems with the lowest line numbers and counts
// all of them.
type problems struct {
	max   int
	kept  []sources.ParseProblem // sorted by line
	count int
}

// add records a problem on 1-based line with a message and the offending
// line (either may be empty). The message and excerpt are sanitised and
// cut to one short line; nothing is formatted unless the problem is kept.
func (p *problems) add(line int, msg string, excerpt []byte) {
	p.count++
	if len(p.kept) >= p.max && line >= p.kept[len(p.kept)-1].Line {
		return
	}
	pr := sources.ParseProblem{
		Line:    line,
		Message: sanitize.Truncate(msg, maxMessageCells),
		Excerpt: excerptOf(excerpt),
	}
	i := sort.Search(len(p.kept), func(i int) bool { return p.kept[i].Line > line })
	if len(p.kept) >= p.max {
		p.kept = p.kept[:len(p.kept)-1]
	}
	p.kept = append(p.kept, sources.ParseProblem{})
	copy(p.kept[i+1:], p.kept[i:len(p.kept)-1])
	p.kept[i] = pr
}

// excerptOf returns a sanitised excerpt of at most maxExcerptCells cells,
// looking at no more than the first excerptBytes of b.
func excerptOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	cut := false
	if len(b) > excerptBytes {
		n := excerptBytes
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b, cut = b[:n], true
	}
	s := sanitize.Text(string(b))
	if cut {
		s += sanitize.Ellipsis
	}
	return sanitize.Truncate(s, maxExcerptCells)
}

// quoteExcerpt quotes a short piece of a line for a message.
func quoteExcerpt(b []byte) string {
	return strconv.Quote(excerptOf(b))
}

// warnings gathers conditions worth one line each, however often they
// occur; list renders them.
type warnings struct {
	html, crlf, noFinalNL, afterEOF bool
	exemplars, floatTimestamps      bool

	badUTF8 int

	dupHeaders     int
	dupHeaderFirst string
	splits         int
	splitFirst     string

	overflows     int
	overflowFirst int32

	dupSeriesN     int
	dupSeriesFirst string

	capped          int // simple lines dropped in the pre-pass by the series cap
	seriesCapped    int // series dropped after parsing by the series cap
	tooManyFamilies int // sample lines dropped because the family cap was reached
}

func (w *warnings) dupHeader(name string) {
	if w.dupHeaders == 0 {
		w.dupHeaderFirst = name
	}
	w.dupHeaders++
}

func (w *warnings) split(name string) {
	if w.splits == 0 {
		w.splitFirst = name
	}
	w.splits++
}

func (w *warnings) dupSeries(name string, n int) {
	if w.dupSeriesN == 0 {
		w.dupSeriesFirst = name
	}
	w.dupSeriesN += n
}

func (w *warnings) repaired(kind repairKind, line int32) {
	if kind&repairOverflow != 0 {
		if w.overflows == 0 {
			w.overflowFirst = line
		}
		w.overflows++
	}
	if kind&repairExemplar != 0 {
		w.exemplars = true
	}
	if kind&repairTimestamp != 0 {
		w.floatTimestamps = true
	}
}

func warnName(n string) string { return sanitize.Truncate(n, maxNameCells) }

func more(n int) string {
	if n <= 1 {
		return ""
	}
	return " (+" + strconv.Itoa(n-1) + " more)"
}

// list renders the warnings, most important first.
func (s *scanner) warningList() []string {
	w := &s.warn
	var out []string
	if s.openMetrics() {
		out = append(out, "target ignores Accept (OpenMetrics body)")
		if !s.eof {
			out = append(out, "OpenMetrics body without # EOF (possibly truncated)")
		}
	}
	if w.afterEOF {
		out = append(out, "data after # EOF ignored")
	}
	if w.html {
		out = append(out, "body looks like HTML, not metrics")
	}
	if w.crlf {
		out = append(out, "CRLF line endings (tolerated)")
	}
	if w.noFinalNL {
		out = append(out, "missing final newline (tolerated)")
	}
	if w.badUTF8 > 0 {
		out = append(out, "invalid UTF-8 replaced with U+FFFD on "+strconv.Itoa(w.badUTF8)+" line(s)")
	}
	if w.dupHeaders > 0 {
		out = append(out, "repeated # TYPE/# HELP for "+warnName(w.dupHeaderFirst)+" dropped"+more(w.dupHeaders))
	}
	if w.splits > 0 {
		out = append(out, "family "+warnName(w.splitFirst)+" split over several blocks; merged"+more(w.splits))
	}
	if w.overflows > 0 {
		out = append(out, "value out of float64 range read as ±Inf (line "+
			strconv.Itoa(int(w.overflowFirst))+")"+more(w.overflows))
	}
	if w.exemplars {
		out = append(out, "OpenMetrics exemplars ignored")
	}
	if w.floatTimestamps {
		out = append(out, "non-integer timestamps ignored")
	}
	if w.dupSeriesN > 0 {
		out = append(out, "duplicate series in "+warnName(w.dupSeriesFirst)+": kept the last ("+
			strconv.Itoa(w.dupSeriesN)+" dropped)")
	}
	if n := w.capped + w.seriesCapped; n > 0 {
		out = append(out, "series cap of "+strconv.Itoa(s.opt.MaxSeries)+" reached: "+strconv.Itoa(n)+" series dropped")
	}
	if w.tooManyFamilies > 0 {
		out = append(out, "more than "+strconv.Itoa(max(s.opt.MaxSeries, minFamilyCap))+" families: "+
			strconv.Itoa(w.tooManyFamilies)+" lines dropped")
	}
	return out
}

func (s *scanner) openMetrics() bool { return s.eof || s.omHint }

// stats assembles the ParseStats for a result with nFams families.
func (s *scanner) stats(nFams int) sources.ParseStats {
	skipped := 0
	for _, f := range s.fams {
		if !f.keep && f.samples > 0 {
			skipped++
		}
	}
	w := &s.warn
	return sources.ParseStats{
		Families:     nFams,
		Series:       s.series,
		Skipped:      skipped,
		Dropped:      s.dropped + w.dupSeriesN + w.capped + w.seriesCapped + w.tooManyFamilies,
		Problems:     s.probs.kept,
		ProblemCount: s.probs.count,
		Warnings:     s.warningList(),
	}
}
