package expo

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// famType is a family's declared type, normalised.
type famType uint8

const (
	tNone famType = iota // no # TYPE line: expfmt makes it untyped
	tCounter
	tGauge
	tHistogram
	tGaugeHistogram
	tSummary
	tUntyped
	tInfo     // OpenMetrics only; parsed as a gauge
	tStateset // OpenMetrics only; parsed as a gauge
)

// expfmtName is the TYPE token handed to expfmt ("" = no TYPE line).
func (t famType) expfmtName() string {
	switch t {
	case tCounter:
		return "counter"
	case tGauge, tInfo, tStateset:
		return "gauge"
	case tHistogram:
		return "histogram"
	case tGaugeHistogram:
		return "gaugehistogram"
	case tSummary:
		return "summary"
	case tUntyped:
		return "untyped"
	}
	return ""
}

// simple reports whether every sample line of the type is its own series.
func (t famType) simple() bool {
	return t != tHistogram && t != tGaugeHistogram && t != tSummary
}

// parseType maps a TYPE token (any case) to a famType; om is true for
// tokens only OpenMetrics uses.
func parseType(tok []byte) (t famType, om, ok bool) {
	switch strings.ToLower(string(tok)) {
	case "counter":
		return tCounter, false, true
	case "gauge":
		return tGauge, false, true
	case "histogram":
		return tHistogram, false, true
	case "summary":
		return tSummary, false, true
	case "untyped":
		return tUntyped, false, true
	case "gauge_histogram":
		return tGaugeHistogram, false, true
	case "gaugehistogram":
		return tGaugeHistogram, true, true
	case "unknown":
		return tUntyped, true, true
	case "info":
		return tInfo, true, true
	case "stateset":
		return tStateset, true, true
	}
	return tNone, false, false
}

// family is one metric family as the pre-pass sees it.
type family struct {
	name      string
	typ       famType
	help      []byte // raw HELP text (escapes as exposed), valid UTF-8
	hasHelp   bool
	helpLine  int32
	typeLine  int32
	firstLine int32
	idx       int32
	keep      bool
	declared  bool    // seen in a # TYPE line
	parent    *family // set for families split off an OpenMetrics family (foo → foo_total, foo_created)
	left      bool    // another family's line came after this family's lines
	samples   int32   // sample lines seen (kept or not)
	kept      int32   // sample lines recorded for parsing
}

// lineRec is one kept sample line: its bytes in the body (or in the alt
// buffer when it had to be rewritten), its family and original line.
type lineRec struct {
	start, end int
	fam        int32
	line       int32
	alt        bool
}

// suffix routing: which sample-name suffixes belong to which family type.
type sfxRule struct {
	sfx     string
	same    bool    // the sample belongs to the family itself (expfmt knows the suffix)
	derived famType // otherwise it becomes a family of its own, with this type
}

var suffixes = []string{"_bucket", "_count", "_sum", "_total", "_created", "_gsum", "_gcount", "_info"}

// rule returns how a sample named base+sfx relates to a family of type t.
func rule(t famType, sfx string) (sfxRule, bool) {
	switch t {
	case tHistogram, tGaugeHistogram:
		switch sfx {
		case "_bucket", "_sum", "_count":
			return sfxRule{sfx: sfx, same: true}, true
		case "_created", "_gsum", "_gcount":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tSummary:
		switch sfx {
		case "_sum", "_count":
			return sfxRule{sfx: sfx, same: true}, true
		case "_created":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tCounter:
		switch sfx {
		case "_total":
			return sfxRule{sfx: sfx, derived: tCounter}, true
		case "_created":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tInfo:
		if sfx == "_info" {
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	}
	return sfxRule{}, false
}

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
	lines      int32
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
	s.lines = no
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

// --- byte-level lexing helpers ---

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlank(b []byte, i int) int {
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func tokenEnd(b []byte, i int) int {
	for i < len(b) && !isBlank(b[i]) {
		i++
	}
	return i
}

func isNameStart(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
}

func isNameByte(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

// legacyNameLen returns the length of the legacy metric name at b[0:].
func legacyNameLen(b []byte) int {
	if len(b) == 0 || !isNameStart(b[0]) {
		return 0
	}
	n := 1
	for n < len(b) && isNameByte(b[n]) {
		n++
	}
	return n
}

// isLegacyName reports whether name needs no quoting.
func isLegacyName(name string) bool {
	return name != "" && legacyNameLen([]byte(name)) == len(name)
}

// metricName lexes a metric name at b[0:] exactly as expfmt reads one:
// either a double-quoted name, or legacy name bytes optionally followed by
// a quoted part that ends the name (expfmt reads `a"b"` as the name "ab").
// n is the number of bytes consumed.
func metricName(b []byte) (name []byte, n int, ok bool) {
	if len(b) > 0 && b[0] == '"' {
		name, n, ok = quoted(b)
		return name, n, ok && len(name) > 0
	}
	n = legacyNameLen(b)
	if n == 0 {
		return nil, 0, false
	}
	if n < len(b) && b[n] == '"' {
		if q, qn, ok := quoted(b[n:]); ok {
			return append(append(make([]byte, 0, n+len(q)), b[:n]...), q...), n + qn, true
		}
	}
	return b[:n], n, true
}

// quoted lexes a double-quoted string at b[0:] with the text format's
// escapes (\\, \", \n; any other escaped byte stands for itself). It
// allocates only when the string has escapes; ok is false when the
// closing quote is missing.
func quoted(b []byte) (s []byte, n int, ok bool) {
	i := 1
	var out []byte
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			if out == nil {
				return b[1:i], i + 1, true
			}
			return out, i + 1, true
		case '\\':
			if out == nil {
				out = append(make([]byte, 0, len(b)), b[1:i]...)
			}
			i++
			if i < len(b) {
				if b[i] == 'n' {
					out = append(out, '\n')
				} else {
					out = append(out, b[i])
				}
			}
		default:
			if out != nil {
				out = append(out, c)
			}
		}
		i++
	}
	return nil, 0, false
}

// sampleName finds the metric name of a sample line (b starts at its
// first non-blank byte): foo{…}, "foo"{…} or {"foo", …}.
func sampleName(b []byte) ([]byte, bool) {
	switch b[0] {
	case '{':
		j := skipBlank(b, 1)
		if j < len(b) && b[j] == '"' {
			name, n, ok := quoted(b[j:])
			k := skipBlank(b, j+n)
			if ok && len(name) > 0 && k < len(b) && (b[k] == ',' || b[k] == '}') {
				return name, true
			}
		}
		return nil, false
	default:
		name, _, ok := metricName(b)
		return name, ok
	}
}

// appendName appends name as a token expfmt reads back as name: plain
// when it is a legacy name, quoted otherwise.
func appendName(dst []byte, name string) []byte {
	if isLegacyName(name) {
		return append(dst, name...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
