package expo

import (
	"bytes"
	"errors"
	"io"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxRetries bounds how often a recovered block is re-parsed after
// dropping a line that only fails in combination with others.
const maxRetries = 8

// parser drives expfmt over the rebuilt body with recovery.
type parser struct {
	s      *scanner
	p      *expfmt.TextParser
	parsed int // bytes expfmt has read so far (it stops at the first error)
}

// parse runs expfmt over the concatenation of up to three parts. A panic inside expfmt (none is known; this is
// belt and braces for network input) becomes an error for that input.
func (pp *parser) parse(parts ...[]byte) (m map[string]*dto.MetricFamily, err error) {
	var in io.Reader
	var readers [3]*bytes.Reader
	if len(parts) == 1 {
		readers[0] = bytes.NewReader(parts[0])
		in = readers[0]
	} else {
		rs := make([]io.Reader, len(parts))
		for i, p := range parts {
			readers[i] = bytes.NewReader(p)
			rs[i] = readers[i]
		}
		in = io.MultiReader(rs...)
	}
	defer func() {
		for i, p := range parts {
			pp.parsed += len(p) - readers[i].Len()
		}
		if p := recover(); p != nil {
			m, err = nil, errParserPanic
			pp.p = newTextParser() // its state is unknown after a panic
		}
	}()
	return pp.p.TextToMetricFamilies(in)
}

var errParserPanic = errors.New("the expfmt parser panicked on this input")

func newTextParser() *expfmt.TextParser {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return &p
}

// parseAll parses every kept block. The happy path is one expfmt call
// (plus one per family isolated by emit).
// When it fails, its partial map is discarded (expfmt leaves invented
// zeros in it); the blocks before the failing one are parsed again
// together, the failing block is recovered on its own, and parsing resumes
// after it. Each byte is parsed a bounded number of times, so the cost
// stays linear in the body.
func (pp *parser) parseAll() map[string]*dto.MetricFamily {
	sc := pp.s.sc
	out := sc.out
	blocks, isolated := sc.blocks[:pp.s.nMain], sc.blocks[pp.s.nMain:]
	var result map[string]*dto.MetricFamily
	for i := range isolated {
		result = pp.recoverBlock(&isolated[i], result)
	}
	for pos := 0; pos < len(blocks); {
		m, err := pp.parse(out[blocks[pos].start:blocks[len(blocks)-1].end])
		if err == nil {
			result = merge(result, m)
			break
		}
		k := pp.failingBlock(err, pos)
		if k > pos {
			if m, err := pp.parse(out[blocks[pos].start:blocks[k-1].end]); err == nil {
				result = merge(result, m)
			} else {
				for j := pos; j < k; j++ {
					result = pp.recoverBlock(&blocks[j], result)
				}
			}
		}
		result = pp.recoverBlock(&blocks[k], result)
		pos = k + 1
	}
	if result == nil {
		result = map[string]*dto.MetricFamily{}
	}
	return result
}

// failingBlock returns the index of the block (at or after pos) holding
// the line expfmt complained about.
func (pp *parser) failingBlock(err error, pos int) int {
	blocks := pp.s.sc.blocks[:pp.s.nMain]
	var pe expfmt.ParseError
	if !errors.As(err, &pe) || pe.Line < 1 {
		return pos
	}
	idx := blocks[pos].line0 + pe.Line - 1
	rest := blocks[pos:]
	i := sort.Search(len(rest), func(i int) bool { return rest[i].line0 > idx })
	if i == 0 {
		return pos
	}
	return pos + i - 1
}

// recoverBlock parses one block on its own; if that fails, it finds the
// bad lines by parsing the block with its header, resuming after each
// line expfmt rejects (so the block is read about once more in all),
// repairs what can be repaired, records the rest as problems, and parses
// the good lines together.
func (pp *parser) recoverBlock(b *block, result map[string]*dto.MetricFamily) map[string]*dto.MetricFamily {
	s := pp.s
	out, lineMap := s.sc.out, s.sc.lineMap
	m, firstErr := pp.parse(out[b.start:b.end])
	if firstErr == nil {
		return merge(result, m)
	}
	hdr := out[b.start:b.hdrEnd]
	hdrLines := lineMap[b.line0 : b.line0+b.nHdr]
	if b.nHdr > 0 {
		if _, err := pp.parse(hdr); err != nil {
			hdr, hdrLines = pp.fixHeader(hdr, hdrLines)
			firstErr = nil // the header changed: parse again
		}
	}

	// Sample lines: starts[i] is the offset in out of line i (each ends
	// with '\n'); starts[n] = b.end.
	starts := make([]int, 0, 64)
	for p := b.hdrEnd; p < b.end; p += bytes.IndexByte(out[p:b.end], '\n') + 1 {
		starts = append(starts, p)
	}
	n := len(starts)
	starts = append(starts, b.end)
	line := func(i int) []byte { return out[starts[i] : starts[i+1]-1] }
	orig := func(i int) int32 { return lineMap[b.line0+b.nHdr+i] }

	bad := make([]bool, n)
	fixed := map[int][]byte{}
	// check decides what to do with line i, which failed with err.
	check := func(i int, err error) {
		if f, kind, ok := repair(line(i)); ok {
			_, ferr := pp.parse(hdr, f, newline)
			if ferr == nil {
				fixed[i] = f
				s.warn.repaired(kind, orig(i))
				return
			}
			err = ferr
		}
		bad[i] = true
		s.problem(orig(i), errMessage(err), line(i))
	}
	for i := 0; i < n; {
		err := firstErr // the whole block with its header, from i = 0
		if i > 0 || err == nil {
			_, err = pp.parse(hdr, out[starts[i]:b.end])
		}
		if err == nil {
			break
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line <= len(hdrLines) || pe.Line-len(hdrLines) > n-i {
			// The failure has no usable line: look at each line alone.
			for ; i < n; i++ {
				if _, err := pp.parse(hdr, out[starts[i]:starts[i+1]]); err != nil {
					check(i, err)
				}
			}
			break
		}
		j := i + pe.Line - len(hdrLines) - 1
		check(j, err)
		i = j + 1
	}

	good := make([]byte, 0, b.end-b.start)
	good = append(good, hdr...)
	goodLines := append(make([]int32, 0, n+2), hdrLines...)
	for i := range n {
		if bad[i] {
			continue
		}
		if f, ok := fixed[i]; ok {
			good = append(good, f...)
		} else {
			good = append(good, line(i)...)
		}
		good = append(good, '\n')
		goodLines = append(goodLines, orig(i))
	}

	for range maxRetries {
		m, err := pp.parse(good)
		if err == nil {
			return merge(result, m)
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line <= len(hdrLines) || pe.Line > len(goodLines) {
			break
		}
		// A line that parses alone but not with the others: drop it.
		start, end := lineBounds(good, pe.Line)
		s.problem(goodLines[pe.Line-1], pe.Msg, good[start:end-1])
		good = append(good[:start], good[end:]...)
		goodLines = append(goodLines[:pe.Line-1], goodLines[pe.Line:]...)
	}
	s.problem(b.fam.firstLine, "family "+b.fam.name+" dropped: its lines do not parse together", nil)
	return result
}

var newline = []byte{'\n'}

// fixHeader keeps the header lines that parse on their own and records the
// others as problems.
func (pp *parser) fixHeader(hdr []byte, lines []int32) ([]byte, []int32) {
	var keptHdr []byte
	var keptLines []int32
	for i, p := 0, 0; p < len(hdr); i++ {
		nl := bytes.IndexByte(hdr[p:], '\n')
		line := hdr[p : p+nl+1]
		p += nl + 1
		if _, err := pp.parse(line); err != nil {
			pp.s.problem(lines[i], errMessage(err), line[:len(line)-1])
			continue
		}
		keptHdr = append(keptHdr, line...)
		keptLines = append(keptLines, lines[i])
	}
	return keptHdr, keptLines
}

// lineBounds returns the byte range of the n-th (1-based) line of b,
// including its newline.
func lineBounds(b []byte, n int) (start, end int) {
	for i := 1; i < n; i++ {
		start += bytes.IndexByte(b[start:], '\n') + 1
	}
	return start, start + bytes.IndexByte(b[start:], '\n') + 1
}

// errMessage is expfmt's message without its "line N" prefix (the line
// number it knows is in the rebuilt body, not the original).
func errMessage(err error) string {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

// merge adds src's families to dst (appending series when a family is in
// both) and returns dst.
func merge(dst, src map[string]*dto.MetricFamily) map[string]*dto.MetricFamily {
	if dst == nil {
		return src
	}
	for name, mf := range src {
		if d := dst[name]; d != nil {
			d.Metric = append(d.Metric, mf.Metric...)
			continue
		}
		dst[name] = mf
	}
	return dst
}
