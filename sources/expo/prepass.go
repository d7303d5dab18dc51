package expo

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// scanner is the state of one Parse call.
type scanner struct {
	body []byte
	opt  Options
	sc   *scratch

	fams   []*family
	byName map[string]*family
	cur    *family

	declared []string
	probs    problems
	warn     warnings

	simpleKept int // kept lines of simple (non-histogram) families, for the series cap
	keptBytes  int // bytes of kept sample lines
	nMain      int // blocks[:nMain] parse together; the rest one by one (see emit)
	series     int // series in the result
	dropped    int // series dropped with unprintable family names
	eof        bool
	omHint     bool
}

func newScanner(body []byte, opt Options, sc *scratch) *scanner {
	return &scanner{
		body:   body,
		opt:    opt,
		sc:     sc,
		byName: make(map[string]*family, 128),
		probs:  problems{max: opt.MaxProblems},
	}
}

// scan walks the body line by line, assigning every sample line to its
// family and recording the lines of kept families.
func (s *scanner) scan() {
	body := s.body
	if i := skipSpace(body, 0); i < len(body) && body[i] == '<' {
		s.warn.html = true
	}
	var no int32
	for pos := 0; pos < len(body); {
		no++
		var line []byte
		next := len(body)
		if nl := bytes.IndexByte(body[pos:], '\n'); nl >= 0 {
			line = body[pos : pos+nl]
			next = pos + nl + 1
		} else {
			line = body[pos:]
			s.warn.noFinalNL = true
		}
		for len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
			s.warn.crlf = true
		}
		s.line(line, pos, no)
		pos = next
		if s.eof {
			if skipSpace(body, pos) < len(body) {
				s.warn.afterEOF = true
			}
			break
		}
	}
}

func (s *scanner) line(line []byte, start int, no int32) {
	i := skipBlank(line, 0)
	if i == len(line) {
		return
	}
	if line[i] == '#' {
		s.comment(line, i+1, no)
		return
	}
	name, ok := sampleName(line[i:])
	if !ok {
		s.problem(no, "line does not start with a metric name", line)
		return
	}
	if !utf8.Valid(name) {
		name = bytes.ToValidUTF8(name, []byte("\uFFFD"))
	}
	f := s.route(name, no)
	if f == nil {
		s.warn.tooManyFamilies++
		return
	}
	f.samples++
	if !f.keep {
		return
	}
	if f.typ.simple() {
		if s.simpleKept >= s.opt.MaxSeries {
			s.warn.capped++
			return
		}
		s.simpleKept++
	}
	f.kept++
	s.keptBytes += len(line) + 1
	rec := lineRec{start: start, end: start + len(line), fam: f.idx, line: no}
	if !utf8.Valid(line) {
		s.warn.badUTF8++
		a := len(s.sc.alt)
		s.sc.alt = append(s.sc.alt, bytes.ToValidUTF8(line, []byte("\uFFFD"))...)
		rec.start, rec.end, rec.alt = a, len(s.sc.alt), true
	}
	s.sc.recs = append(s.sc.recs, rec)
}

// comment handles a line starting with '#': HELP, TYPE, EOF, UNIT or a
// plain comment (ignored).
func (s *scanner) comment(line []byte, i int, no int32) {
	i = skipBlank(line, i)
	kwEnd := tokenEnd(line, i)
	kw := line[i:kwEnd]
	switch string(kw) {
	case "HELP", "TYPE":
	case "EOF":
		if skipBlank(line, kwEnd) == len(line) {
			s.eof = true
		}
		return
	case "UNIT":
		s.omHint = true
		return
	default:
		return
	}
	i = skipBlank(line, kwEnd)
	if i == len(line) {
		return // "# TYPE" alone: expfmt ignores it too
	}
	name, n, ok := metricName(line[i:])
	if !ok || (i+n < len(line) && !isBlank(line[i+n])) {
		s.problem(no, "invalid metric name in # "+string(kw)+" line", line)
		return
	}
	if !utf8.Valid(name) {
		name = bytes.ToValidUTF8(name, []byte("\uFFFD"))
	}
	rest := line[skipBlank(line, i+n):]
	f := s.byName[string(name)]
	if f == nil {
		if f = s.newFamily(string(name), no, nil); f == nil {
			return
		}
	}
	s.enter(f)
	if string(kw) == "HELP" {
		if len(rest) == 0 {
			return
		}
		if f.hasHelp {
			s.warn.dupHeader(f.name)
			return
		}
		if !utf8.Valid(rest) {
			s.warn.badUTF8++
			rest = bytes.ToValidUTF8(rest, []byte("\uFFFD"))
		}
		f.help, f.hasHelp, f.helpLine = rest, true, no
		return
	}
	rest = bytes.TrimRight(rest, " \t")
	if len(rest) == 0 {
		return
	}
	if !f.declared {
		f.declared = true
		s.declared = append(s.declared, f.name)
	}
	t, om, ok := parseType(rest)
	if !ok {
		s.problem(no, "unknown metric type "+quoteExcerpt(rest), line)
		return
	}
	if om {
		s.omHint = true
	}
	switch {
	case f.typ == tNone:
		f.typ, f.typeLine = t, no
	case f.typ == t:
		s.warn.dupHeader(f.name)
	default:
		s.problem(no, "conflicting # TYPE "+t.expfmtName()+" for "+f.name+
			" (already "+f.typ.expfmtName()+"); keeping the first", line)
	}
}

// route finds (or creates) the family a sample named name belongs to and
// makes it current. It returns nil when the family cap is reached.
func (s *scanner) route(name []byte, no int32) *family {
	if c := s.cur; c != nil {
		if string(name) == c.name {
			return c
		}
		if f, ok := s.bySuffix(c, name, no); ok {
			return f
		}
	}
	if f := s.byName[string(name)]; f != nil {
		s.enter(f)
		return f
	}
	for _, sfx := range suffixes {
		if len(name) <= len(sfx) || string(name[len(name)-len(sfx):]) != sfx {
			continue
		}
		b := s.byName[string(name[:len(name)-len(sfx)])]
		if b == nil {
			continue
		}
		if f, ok := s.bySuffix(b, name, no); ok {
			s.enter(b)
			return f
		}
	}
	f := s.newFamily(string(name), no, nil)
	if f != nil {
		s.enter(f)
	}
	return f
}

// bySuffix resolves name as base family b plus a known suffix: b itself
// for _bucket/_sum/_count of histograms and summaries, otherwise a family
// of its own split off b (OpenMetrics foo_total, foo_created, ...).
func (s *scanner) bySuffix(b *family, name []byte, no int32) (*family, bool) {
	if len(name) <= len(b.name) || string(name[:len(b.name)]) != b.name {
		return nil, false
	}
	r, ok := rule(b.typ, string(name[len(b.name):]))
	if !ok {
		return nil, false
	}
	if r.same {
		return b, true
	}
	if f := s.byName[string(name)]; f != nil {
		return f, true
	}
	f := s.newFamily(string(name), no, b)
	if f == nil {
		return nil, false
	}
	f.typ = r.derived
	return f, true
}

// enter makes f (or the family it was split off) the current family,
// noting a family that comes back after another family's lines.
func (s *scanner) enter(f *family) {
	if f.parent != nil {
		f = f.parent
	}
	if s.cur == f {
		return
	}
	if s.cur != nil {
		s.cur.left = true
	}
	if f.left {
		s.warn.split(f.name)
		f.left = false
	}
	s.cur = f
}

// minFamilyCap is the least number of distinct families tracked per body
// (the cap is max(MaxSeries, minFamilyCap)); it bounds the pre-pass's
// memory on bodies made of millions of one-line families.
const minFamilyCap = 10000

// newFamily registers a family and decides once whether it is kept. It
// returns nil when there are already too many families.
func (s *scanner) newFamily(name string, no int32, parent *family) *family {
	if len(s.fams) >= max(s.opt.MaxSeries, minFamilyCap) {
		return nil
	}
	f := &family{name: name, firstLine: no, idx: int32(len(s.fams)), parent: parent}
	f.keep = s.keepName(name) || (parent != nil && parent.keep)
	s.fams = append(s.fams, f)
	s.byName[name] = f
	return f
}

// keepName asks Options.Keep about name, also accepting Python's separate
// _created/_gsum/_gcount gauge families when their base is wanted.
func (s *scanner) keepName(name string) bool {
	keep := s.opt.Keep
	if keep == nil || keep(name) {
		return true
	}
	for _, sfx := range [...]string{"_created", "_gsum", "_gcount"} {
		if base, ok := strings.CutSuffix(name, sfx); ok && base != "" {
			return keep(base) || (sfx == "_created" && keep(base+"_total"))
		}
	}
	return false
}

// problem records a problem on original line no with excerpt line.
func (s *scanner) problem(no int32, msg string, line []byte) {
	s.probs.add(int(no), msg, line)
}
